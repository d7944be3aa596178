import Foundation
import OpenRealm

// The object API as a server developer uses it: model classes are the schema, objects are
// live once added, links and collections, mixed values, decimals, primary-key lookups, and a
// schema change refused with a typed error, then migrated.

final class DemoOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var balance: Decimal128
    @Persisted var dogs: List<DemoDog>
    @Persisted var tags: MutableSet<String>
    @Persisted var settings: Map<String, AnyRealmValue>
}

final class DemoDog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var extra: AnyRealmValue
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<DemoOwner>
}

/// Version 2 of `DemoDog`: `age` became `ageInMonths`.
final class DemoDogV2: Object {
    override class func className() -> String { "DemoDog" }
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted(indexed: true) var ageInMonths = 0
    @Persisted var extra: AnyRealmValue
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<DemoOwner>
}

enum ObjectDemo {
    static func run(directory: String) throws {
        let url = URL(fileURLWithPath: directory).appendingPathComponent("objects.realm")
        _ = try? Realm.deleteFiles(for: Realm.Configuration(fileURL: url))
        print("OpenRealm object API demo: \(url.path)")
        var clock = Stopwatch()
        let owners = 20_000
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [DemoOwner.self, DemoDog.self]))
            for batch in stride(from: 0, to: owners, by: 5_000) {
                try realm.write {
                    for id in batch..<(batch + 5_000) {
                        let owner = DemoOwner()
                        owner.id = id
                        owner.name = "owner-\(id)"
                        owner.balance = try Decimal128(string: "\(id).25")
                        owner.tags.insert(id % 2 == 0 ? "even" : "odd")
                        owner.settings["vip"] = .bool(id % 100 == 0)
                        for n in 0..<2 {
                            let dog = DemoDog()
                            dog._id = ObjectId.generate()
                            dog.name = "dog-\(id)-\(n)"
                            dog.age = (id + n) % 15
                            dog.extra = n == 0 ? .string("good dog") : .int(id)
                            owner.dogs.append(dog)
                        }
                        realm.add(owner)
                    }
                }
            }
            print("added \(owners) owners and \(owners * 2) dogs in \(owners / 5_000) durable writes: \(clock.lap())")

            var total = Decimal128()
            for id in stride(from: 0, to: owners, by: 7) {
                guard let owner = realm.object(ofType: DemoOwner.self, forPrimaryKey: id) else { continue }
                total += owner.balance
            }
            let owner = realm.object(ofType: DemoOwner.self, forPrimaryKey: 4_200)!
            print("looked up \(owners / 7 + 1) owners by primary key, balances sum to \(total): \(clock.lap())")
            print("owner 4200: \(owner.dogs.count) dogs \(owner.dogs.map(\.name)), tags \(Array(owner.tags)), "
                  + "vip \(owner.settings["vip"].map { "\($0)" } ?? "-"), first dog's owner \(owner.dogs[0].owners.first?.name ?? "-")")
            try realm.write {
                owner.dogs[0].extra = .object(owner)
                realm.delete(owner.dogs[1])
            }
            print("a mixed value links dog \(owner.dogs[0].name) back to \(owner.dogs[0].extra.object(DemoOwner.self)?.name ?? "-"); "
                  + "owner 4200 now has \(owner.dogs.count) dog")

            // Queries: predicate strings, type-safe queries, sorting and aggregates.
            let puppies = realm.objects(DemoDog.self).filter("age < %@ AND name BEGINSWITH[c] %@", 2, "DOG-1")
            let bigFamilies = realm.objects(DemoOwner.self).where { $0.dogs.count == 2 && $0.tags.contains("even") }
            let oldestFirst = realm.objects(DemoDog.self).sorted(by: [SortDescriptor(keyPath: "age", ascending: false), "name"])
            let averageAge: Double = realm.objects(DemoDog.self).average(ofProperty: "age") ?? 0
            print("\(puppies.count) puppies named dog-1…, \(bigFamilies.count) even owners with two dogs, oldest dog \(oldestFirst[0].name), "
                  + "average age \(String(format: "%.2f", averageAge)): \(clock.lap())")
            do throws(Realm.Error) {
                _ = try realm.objects(DemoDog.self).filter("age >> 3", arguments: [])
            } catch {
                print("a malformed predicate from user input: \(error.code): \(error.message)")
            }
        }

        var configuration = Realm.Configuration(fileURL: url, objectTypes: [DemoOwner.self, DemoDogV2.self])
        do {
            _ = try Realm(configuration: configuration)
        } catch let error as Realm.Error {
            print("opening with a changed model and the old schema version: \(error.code): \(error.message.prefix(90))…")
        }
        configuration.schemaVersion = 1
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "DemoDog") { old, new in
                new!["ageInMonths"] = (old!["age"] as! Int) * 12
            }
        }
        let migrated = try Realm(configuration: configuration)
        let dogs = migrated.objects(DemoDogV2.self)
        print("migrated \(dogs.count) dogs to ages in months (\(dogs[3].name): \(dogs[3].ageInMonths)): \(clock.lap())")
    }
}
