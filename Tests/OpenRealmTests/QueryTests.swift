import Foundation
import Testing
import TestSupport
@testable import OpenRealm

@Suite(.childProcesses) struct QueryTests {
    static func dogs(_ realm: Realm) throws {
        try realm.write {
            for (name, age, breed) in [("Fido", 1, "tan"), ("Rex", 3, "black"), ("Bella", 1, "tan"), ("Buddy", 5, "tan"), ("Max", 0, nil)] {
                let dog = Dog()
                dog.name = name
                dog.age = age
                dog.breed = breed
                realm.add(dog)
            }
        }
    }

    // MARK: The seeds' queries

    @Test func theSeedsQueriesSelectTheirObjects() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try Self.dogs(realm)
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("age < 2").map(\.name) == ["Fido", "Bella", "Max"])
        #expect(dogs.filter("age == 1").first?.name == "Fido")
        #expect(dogs.filter("name contains 'Fido'").count == 1)
        let tanDogs = dogs.filter("breed = 'tan' AND name BEGINSWITH 'B'")
        #expect(tanDogs.map(\.name) == ["Bella", "Buddy"])
        #expect(dogs.filter("breed = %@ AND name BEGINSWITH %@", "tan", "B").map(\.name) == ["Bella", "Buddy"])
        // Chaining.
        #expect(dogs.filter("breed = 'tan'").filter("name BEGINSWITH 'B'").map(\.name) == ["Bella", "Buddy"])
        #expect(dogs.filter("age BETWEEN %@", [1, 3]).map(\.name) == ["Fido", "Rex", "Bella"])
        #expect(dogs.filter("name IN {'Rex', 'Max', 'Nobody'}").map(\.name) == ["Rex", "Max"])
        #expect(dogs.filter("breed == nil").map(\.name) == ["Max"])
        #expect(tanDogs.sorted(byKeyPath: "name", ascending: false).map(\.name) == ["Buddy", "Bella"])
    }

    @Test func objectsAreComparedByIdentityAndNil() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Employee.self, Company.self]))
        let acme = Company(), initech = Company()
        acme.name = "Acme"
        initech.name = "Initech"
        try realm.write {
            realm.add([acme, initech])
            for i in 0..<7 {
                let e = Employee()
                e.name = "e\(i)"
                e.company = i < 6 ? acme : initech
                realm.add(e)
                (i < 6 ? acme : initech).employees.append(e)
            }
            acme.ceo = realm.objects(Employee.self).first
        }
        #expect(realm.objects(Employee.self).filter("company == %@", acme).count == 6)
        #expect(realm.objects(Employee.self).filter("company != %@", acme).map(\.name) == ["e6"])
        #expect(realm.objects(Company.self).filter("ceo == nil").map(\.name) == ["Initech"])
        #expect(realm.objects(Company.self).filter("employees.@count > 5").map(\.name) == ["Acme"])
        #expect(realm.objects(Company.self).filter("ANY employees.name == 'e6'").map(\.name) == ["Initech"])
    }

    @Test func linkingObjectsCanBeQueried() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        try realm.write {
            let ann = Rambler(), bob = Rambler()
            ann.id = 1
            ann.name = "Ann"
            bob.id = 2
            bob.name = "Bob"
            let rex = Hound(), tom = Hound()
            rex.name = "Rex"
            tom.name = "Tom"
            ann.pets.append(objectsIn: [rex, tom])
            bob.pets.append(rex)
            realm.add([ann, bob])
        }
        let pets = realm.objects(Hound.self)
        #expect(pets.filter("walkers.@count == 2").map(\.name) == ["Rex"])
        #expect(pets.filter("ANY walkers.name == 'Bob'").map(\.name) == ["Rex"])
        #expect(pets.filter("NONE walkers.name == 'Bob'").map(\.name) == ["Tom"])
    }

    @Test func listsSetsAndLinkingObjectsCanBeQueriedInTheirOrder() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        let ann = Rambler()
        ann.id = 1
        for (name, age) in [("Rex", 5), ("Ace", 2), ("Tom", 9), ("Bo", 2)] {
            let hound = Hound()
            hound.name = name
            hound.age = age
            ann.pets.append(hound)
        }
        try realm.write { realm.add(ann) }
        let young = ann.pets.filter("age < 6")
        #expect(young.map(\.name) == ["Rex", "Ace", "Bo"])
        #expect(ann.pets.sorted(byKeyPath: "name").map(\.name) == ["Ace", "Bo", "Rex", "Tom"])
        #expect(ann.pets.sorted(by: ["age", SortDescriptor(keyPath: "name", ascending: false)]).map(\.name) == ["Bo", "Ace", "Rex", "Tom"])
        let total: Int = ann.pets.sum(ofProperty: "age")
        #expect(total == 18)
        #expect(ann.pets.index(matching: "name == 'Tom'") == 2)
        // The results follow the list.
        try realm.write {
            let hound = Hound()
            hound.name = "Zed"
            hound.age = 1
            ann.pets.insert(hound, at: 0)
        }
        #expect(young.map(\.name) == ["Zed", "Rex", "Ace", "Bo"])
        let rex = realm.objects(Hound.self).filter("name == 'Rex'").first!
        #expect(rex.walkers.filter("id == 1").count == 1)
        #expect(rex.walkers.filter("id == 2").isEmpty)
        try realm.write { ann.pack.insert(objectsIn: ann.pets) }
        #expect(ann.pack.filter("age == 2").map(\.name).sorted() == ["Ace", "Bo"])
        #expect(ann.pack.where { $0.name.starts(with: "Z") }.map(\.name) == ["Zed"])
        let oldest: Int? = ann.pack.max(ofProperty: "age")
        #expect(oldest == 9)
        #expect(realm.objects(Rambler.self).where { $0.pack.age > 8 }.count == 1)
        let error = #expect(throws: Realm.Error.self) { try ann.pets.filter("age >", arguments: []) }
        #expect(error?.code == .invalidQuery)
    }

    // MARK: Live results

    @Test func resultsFollowCommitsAndTheWritersOwnChanges() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        let puppies = realm.objects(Dog.self).filter("age < 2")
        #expect(puppies.count == 0)
        try realm.write {
            let dog = Dog()
            dog.name = "Fido"
            dog.age = 1
            realm.add(dog)
            #expect(puppies.count == 1)
            dog.age = 4
            #expect(puppies.count == 0)
            dog.age = 0
        }
        #expect(puppies.count == 1)
        // Another realm's commit shows after a refresh.
        let other = try Realm(configuration: folder.configuration([Dog.self]))
        try other.write {
            let dog = Dog()
            dog.age = 1
            other.add(dog)
        }
        #expect(puppies.count == 1)
        realm.refresh()
        #expect(puppies.count == 2)
    }

    @Test func enumerationVisitsTheObjectsThatMatchedWhenItBegan() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try Self.dogs(realm)
        let ones = realm.objects(Dog.self).filter("age == 1")
        var visited: [String] = []
        try realm.write {
            for dog in ones {
                dog.age += 1
                visited.append(dog.name)
            }
        }
        #expect(visited == ["Fido", "Bella"])
        #expect(ones.isEmpty)
    }

    // MARK: Sorting, distinct, aggregates

    @Test func sortingDistinctAndAggregates() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try Self.dogs(realm)
        let dogs = realm.objects(Dog.self)
        #expect(dogs.sorted(byKeyPath: "age").map(\.name) == ["Max", "Fido", "Bella", "Rex", "Buddy"])
        #expect(dogs.sorted(by: [SortDescriptor(keyPath: "age", ascending: false), "name"]).map(\.name) == ["Buddy", "Rex", "Bella", "Fido", "Max"])
        // nil first ascending.
        #expect(dogs.sorted(byKeyPath: "breed").map(\.name) == ["Max", "Rex", "Fido", "Bella", "Buddy"])
        // Only the last sort counts.
        #expect(dogs.sorted(byKeyPath: "age").sorted(byKeyPath: "name").map(\.name) == ["Bella", "Buddy", "Fido", "Max", "Rex"])
        #expect(dogs.distinct(by: ["age"]).map(\.name) == ["Fido", "Rex", "Buddy", "Max"])
        #expect(dogs.distinct(by: ["breed"]).count == 3)
        let sum: Int = dogs.sum(ofProperty: "age")
        #expect(sum == 10)
        let average: Double? = dogs.average(ofProperty: "age")
        #expect(average == 2)
        let oldest: Int? = dogs.max(ofProperty: "age")
        #expect(oldest == 5)
        let youngest: Int? = dogs.filter("breed == 'tan'").min(ofProperty: "age")
        #expect(youngest == 1)
        let none: Int? = dogs.filter("FALSEPREDICATE").max(ofProperty: "age")
        #expect(none == nil)
        let emptySum: Double = dogs.filter("FALSEPREDICATE").sum(ofProperty: "age")
        #expect(emptySum == 0)
        let rex = dogs.filter("name == 'Rex'").first!
        #expect(dogs.sorted(byKeyPath: "age").index(of: rex) == 3)
        #expect(dogs.index(matching: "age > %@", 2) == 1)
        #expect(dogs.last?.name == "Max")
    }

    // MARK: Bad predicates

    @Test(arguments: [
        ("age <", "offset"),
        ("agee > 3", "no property 'agee'"),
        ("name > 3", "string"),
        ("age BEGINSWITH 'a'", "string property"),
        ("ANY name == 'a'", "ANY"),
        ("age > %@", "argument"),
        ("age.foo > 3", "not a link"),
        ("age == 'abc'", "string"),
        ("(age > 3", "offset"),
        ("age BETWEEN {1}", "two values"),
        ("name.@count > 1", "@count"),
        ("3 < 4", "key path"),
    ])
    func badPredicatesThrowInvalidQuery(format: String, fragment: String) throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        let error = #expect(throws: Realm.Error.self) { try realm.objects(Dog.self).filter(format, arguments: []) }
        #expect(error?.code == .invalidQuery)
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
    }

    @Test func wronglyTypedArgumentsThrowInvalidQuery() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        let dogs = realm.objects(Dog.self)
        for (format, argument) in [("age > %@", "3" as Any), ("name == %@", 3 as Any), ("dateOfBirth < %@", 5 as Any), ("age IN %@", 5 as Any),
                                   ("age == %@", Dog() as Any)] {
            let error = #expect(throws: Realm.Error.self) { try dogs.filter(format, arguments: [argument]) }
            #expect(error?.code == .invalidQuery)
            #expect(error?.message.contains("argument 0") == true, "\(error?.message ?? "")")
        }
    }

    @Test func queryingAnUnmanagedListTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Rambler().pets.filter("age > 1")
        }
        MisuseTests.expectRule(result, "Only a managed collection can be queried")
    }

    @Test func aBadPredicateInTheNonThrowingFilterTrapsWithTheReason() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration([Dog.self]))
            _ = realm.objects(Dog.self).filter("agee > 3")
        }
        MisuseTests.expectRule(result, "class Dog has no property 'agee'")
    }

    @Test func sortingByAnUnknownPropertyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration([Dog.self]))
            _ = realm.objects(Dog.self).sorted(byKeyPath: "height")
        }
        MisuseTests.expectRule(result, "Cannot sort by 'height'")
    }
}

/// Which conditions the planner answers through an index, and which it scans.
@Suite struct QueryPlanTests {
    @Test func indexedEqualityInAndSelectiveRangesUseTheIndex() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        try realm.write {
            for id in 0..<400 {
                let w = Rambler()
                w.id = id
                w.age = id % 50
                w.name = "n\(id % 7)"
                realm.add(w)
            }
        }
        let schema = try ObjectSchema.of(Rambler.self)
        let binding = try #require(try realm.binding(for: Rambler.self))
        let table = try realm.tableView(binding.table)
        func plan(_ format: String, _ arguments: [Any] = []) throws -> ScanPlan {
            try ScanPlan.make(try Results<Rambler>.bind(format, arguments, schema), binding, table)
        }
        #expect(try plan("age == 3").index != nil)
        #expect(try plan("age IN {3, 4}").index != nil)
        #expect(try plan("id == 7 AND name == 'n0'").index?.values == [.int(7)])
        #expect(try plan("age BETWEEN {3, 4}").rangeCandidates?.count == 16)
        #expect(try plan("id < 20").rangeCandidates?.count == 20)
        // A wide range, a non-indexed column, a folded or a cross-type comparison: scanned.
        #expect(try plan("age > 3").rangeCandidates == nil)
        #expect(try plan("name == 'n1'").index == nil)
        #expect(try plan("age == 3.0").index == nil)
        #expect(try plan("age == 3 OR name == 'n1'").index == nil)
        #expect(realm.objects(Rambler.self).filter("id < 20 AND age == 3").map(\.id) == [3])
    }
}
