import Foundation
import Testing
@testable import OpenRealm

/// Type-safe queries select the same objects as the predicate strings they stand for.
@Suite struct TypeSafeQueryTests {
    static func realm(_ folder: TestFolder) throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        var generator = QueryOracleTests.Generator(random: SeededRandom(seed: 42))
        try QueryOracleTests.fill(realm, (0..<80).map { generator.plain(id: $0) })
        return realm
    }

    @Test func typeSafeQueriesMatchTheirPredicateStrings() throws {
        let folder = TestFolder()
        let realm = try Self.realm(folder)
        let all = realm.objects(Rambler.self)
        let day = Date(timeIntervalSince1970: 5 * 86_400)
        let pairs: [(Results<Rambler>, String, [Any])] = [
            (all.where { $0.age < 5 }, "age < 5", []),
            (all.where { $0.age >= 5 && $0.name.starts(with: "A") }, "age >= 5 AND name BEGINSWITH 'A'", []),
            (all.where { $0.age == 3 || !($0.score > 2.5) }, "age == 3 OR NOT score > 2.5", []),
            (all.where { $0.name.contains("nn", options: .caseInsensitive) }, "name CONTAINS[c] 'nn'", []),
            (all.where { $0.name.ends(with: "b") }, "name ENDSWITH 'b'", []),
            (all.where { $0.name.like("?o*", caseInsensitive: true) }, "name LIKE[c] '?o*'", []),
            (all.where { $0.name.equals("ann", options: [.caseInsensitive, .diacriticInsensitive]) }, "name ==[cd] 'ann'", []),
            (all.where { $0.nickname == nil }, "nickname == nil", []),
            (all.where { $0.nickname != nil && $0.nickname.starts(with: "B") }, "nickname != nil AND nickname BEGINSWITH 'B'", []),
            (all.where { $0.active }, "active == true", []),
            (all.where { !$0.active }, "NOT active == true", []),
            (all.where { $0.joined > day }, "joined > %@", [day]),
            (all.where { $0.age.in([1, 3, 5]) }, "age IN {1, 3, 5}", []),
            (all.where { $0.age.contains(3...7) }, "age BETWEEN {3, 7}", []),
            (all.where { $0.age.contains(3..<7) }, "age >= 3 AND age < 7", []),
            (all.where { $0.tags.contains("ab") }, "ANY tags == 'ab'", []),
            (all.where { $0.tags.containsAny(in: ["a", "c"]) }, "ANY tags IN {'a', 'c'}", []),
            (all.where { $0.tags.count > 1 }, "tags.@count > 1", []),
            (all.where { $0.pets.age > 10 }, "ANY pets.age > 10", []),
            (all.where { $0.pets.count == 0 }, "pets.@count == 0", []),
            (all.where { $0.pets.age.max > 8 }, "pets.@max.age > 8", []),
            (all.where { $0.pets.age.avg < 6 }, "pets.@avg.age < 6", []),
            (all.where { $0.pets.age.sum >= 12 }, "pets.@sum.age >= 12", []),
            (all.where { $0.pets.name.starts(with: "B", options: .caseInsensitive) }, "ANY pets.name BEGINSWITH[c] 'B'", []),
            (all.where { $0.favorite.age < 4 }, "favorite.age < 4", []),
            (all.where { $0.favorite == nil }, "favorite == nil", []),
            (all.where { $0.age > $0.favorite.age }, "age > favorite.age", []),
        ]
        for (results, format, arguments) in pairs {
            let expected = try all.filter(format, arguments: arguments).map(\.id)
            #expect(results.map(\.id) == expected, "\(format)")
            #expect(!expected.isEmpty || format.contains("=="), "\(format) selects nothing: a weak test")
        }
    }

    @Test func objectsAndCollectionsCanBeCompared() throws {
        let folder = TestFolder()
        let realm = try Self.realm(folder)
        let someone = realm.objects(Rambler.self).filter("pets.@count > 1").first!
        let hound = someone.pets[0]
        #expect(realm.objects(Rambler.self).where { $0.pets.contains(hound) }.map(\.id) == [someone.id])
        #expect(realm.objects(Hound.self).where { $0.walkers.count > 0 && $0.age == hound.age }.contains { $0 == hound })
        #expect(someone.pets.where { $0.age == hound.age }.first == hound)
    }
}
