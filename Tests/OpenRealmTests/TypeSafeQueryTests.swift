import Foundation
import Testing
import TestSupport
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

/// Generated type-safe queries against the same conditions in Swift.
@Suite struct GeneratedTypeSafeQueryTests {
    typealias Plain = QueryOracleTests.Plain

    /// A type-safe condition and the same condition in Swift.
    struct Case {
        var query: (Query<Rambler>) -> Query<Bool>
        var holds: (Plain) -> Bool
        var text: String
    }

    struct Generator {
        var random: SeededRandom
        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }

        mutating func predicate(depth: Int = 0) -> Case {
            if depth < 2 && chance(45) {
                let a = predicate(depth: depth + 1), b = predicate(depth: depth + 1)
                switch int(0...2) {
                case 0: return Case(query: { a.query($0) && b.query($0) }, holds: { a.holds($0) && b.holds($0) }, text: "(\(a.text) && \(b.text))")
                case 1: return Case(query: { a.query($0) || b.query($0) }, holds: { a.holds($0) || b.holds($0) }, text: "(\(a.text) || \(b.text))")
                default: return Case(query: { !a.query($0) }, holds: { !a.holds($0) }, text: "!\(a.text)")
                }
            }
            return leaf()
        }

        mutating func leaf() -> Case {
            let n = int(0...20)
            let x = Double(int(-45...45)) / 4
            let s = ["a", "An", "ann", "b", "Bo", "o", "Zoe"][int(0...6)]
            let tag = ["a", "ab", "b", "Ba", "c"][int(0...4)]
            switch int(0...17) {
            case 0: return Case(query: { $0.age == n }, holds: { $0.age == n }, text: "age == \(n)")
            case 1: return Case(query: { $0.age != n }, holds: { $0.age != n }, text: "age != \(n)")
            case 2: return Case(query: { $0.age < n }, holds: { $0.age < n }, text: "age < \(n)")
            case 3: return Case(query: { $0.age >= n }, holds: { $0.age >= n }, text: "age >= \(n)")
            case 4: return Case(query: { $0.score > x }, holds: { $0.score > x }, text: "score > \(x)")
            case 5: return Case(query: { $0.score <= x }, holds: { $0.score <= x }, text: "score <= \(x)")
            case 6: return Case(query: { $0.name.starts(with: s) }, holds: { $0.name.hasPrefix(s) }, text: "name starts \(s)")
            case 7:
                return Case(query: { $0.name.contains(s, options: .caseInsensitive) }, holds: { $0.name.lowercased().contains(s.lowercased()) },
                            text: "name contains[c] \(s)")
            case 8: return Case(query: { $0.name.ends(with: s) }, holds: { $0.name.hasSuffix(s) }, text: "name ends \(s)")
            case 9: return Case(query: { $0.nickname == nil }, holds: { $0.nickname == nil }, text: "nickname nil")
            case 10: return Case(query: { $0.active }, holds: { $0.active }, text: "active")
            case 11: return Case(query: { $0.tags.contains(tag) }, holds: { $0.tags.contains(tag) }, text: "tags contains \(tag)")
            case 12:
                let m = int(0...3)
                return Case(query: { $0.pets.count > m }, holds: { $0.pets.count > m }, text: "pets.count > \(m)")
            case 13: return Case(query: { $0.pets.age > n }, holds: { $0.pets.contains { $0.age > n } }, text: "pets.age > \(n)")
            case 14:
                return Case(query: { $0.pets.age.max < n }, holds: { p in p.pets.map(\.age).max().map { $0 < n } ?? false }, text: "pets.age.max < \(n)")
            case 15:
                return Case(query: { $0.favorite.age >= n }, holds: { p in p.favoriteAge.map { $0 >= n } ?? false }, text: "favorite.age >= \(n)")
            case 16:
                let values = (0..<int(0...3)).map { _ in int(0...20) }
                return Case(query: { $0.age.in(values) }, holds: { values.contains($0.age) }, text: "age in \(values)")
            default:
                let low = int(0...20), high = int(0...20)
                return Case(query: { $0.age.contains(low...max(low, high)) }, holds: { $0.age >= low && $0.age <= max(low, high) },
                            text: "age in \(low)...\(max(low, high))")
            }
        }
    }

    @Test(arguments: [31, 32])
    func generatedTypeSafeQueriesSelectWhatSwiftSelects(seed: UInt64) throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        var data = QueryOracleTests.Generator(random: SeededRandom(seed: seed))
        let plains = (0..<120).map { data.plain(id: $0) }
        try QueryOracleTests.fill(realm, plains)
        var generator = Generator(random: SeededRandom(seed: seed + 100))
        let all = realm.objects(Rambler.self)
        for _ in 0..<600 {
            let c = generator.predicate()
            let expected = plains.filter(c.holds).map(\.id)
            let results = all.where(c.query)
            #expect(results.count == expected.count, "\(c.text)")
            #expect(results.map(\.id) == expected, "\(c.text)")
        }
    }
}
