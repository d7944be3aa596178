import Foundation
@testable import OpenRealm
import Testing
import TestSupport

// Results kept up to date from the change sets (Notifications/KeptOrder.swift): random
// commits against 20,000 objects under random sorts (with many ties) and filters. Debug builds
// check every incremental delivery against the full diff inside the library; here each
// delivery is also applied to the previous contents and must give the results now.

/// A scored entry: many share a score (ties), names share prefixes.
final class ScoredEntry: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var score = 0
    @Persisted var name = ""
    @Persisted var flag = false
}

@Suite struct IncrementalResultsTests {
    typealias Sort = OpenRealm.SortDescriptor
    struct Case {
        var filter: String?
        var sort: [Sort]
    }

    /// Objects at the start: 20,000 in the optimised run CI makes (`.ci/run`), fewer in debug
    /// builds, which run about ten times slower and check each incremental delivery against the
    /// full diff besides.
    #if DEBUG
    static let objects = 8_000
    #else
    static let objects = 20_000
    #endif

    /// The observed results of each case: a filter (or none) and sort descriptors (or none).
    static let cases: [Case] = [
        Case(filter: nil, sort: [Sort(keyPath: "score")]),
        Case(filter: nil, sort: [Sort(keyPath: "score", ascending: false)]),
        Case(filter: "score < 1000", sort: [Sort(keyPath: "name")]),
        Case(filter: "flag == true", sort: [Sort(keyPath: "score", ascending: false), Sort(keyPath: "name")]),
        Case(filter: "score >= 500 AND name BEGINSWITH 'b'", sort: []),
        Case(filter: nil, sort: []),
        // Answered by the index on `score`: the keys must still come in key order.
        Case(filter: "score IN {3, 700, 1500}", sort: []),
        Case(filter: "score == 700", sort: [Sort(keyPath: "name", ascending: false)]),
    ]

    static func name(_ random: inout SeededRandom) -> String {
        let letters = ["a", "b", "c"]
        return (0..<3).map { _ in letters[Int.random(in: 0..<3, using: &random)] }.joined() + "\(Int.random(in: 0..<50, using: &random))"
    }

    static func add(_ id: Int, _ realm: Realm, _ random: inout SeededRandom) {
        let entry = ScoredEntry()
        entry.id = id
        entry.score = Int.random(in: 0..<2_000, using: &random)
        entry.name = name(&random)
        entry.flag = Bool.random(using: &random)
        realm.add(entry)
    }

    @Test(arguments: Array(0..<8), [7] as [UInt64])
    func incrementalDeliveriesRebuildTheResults(kind: Int, seed: UInt64) throws {
        let counter = IncrementalDeliveries.Counter()
        try IncrementalDeliveries.$counter.withValue(counter) { try rebuild(kind: kind, seed: seed, counter: counter) }
    }

    func rebuild(kind: Int, seed: UInt64, counter: IncrementalDeliveries.Counter) throws {
        var random = SeededRandom(seed: seed &* 31 &+ UInt64(kind))
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([ScoredEntry.self]))
        var ids: [Int] = []
        try realm.write { for id in 0..<Self.objects { Self.add(id, realm, &random); ids.append(id) } }
        var nextID = Self.objects

        let filter = Self.cases[kind].filter, sort = Self.cases[kind].sort
        var results = realm.objects(ScoredEntry.self)
        if let filter { results = results.filter(filter) }
        if !sort.isEmpty { results = results.sorted(by: sort) }
        var deliveries: [RealmCollectionChange<Results<ScoredEntry>>] = []
        let token = results.observe { deliveries.append($0) }
        realm.refresh()
        var contents = results.map(\.id)

        for step in 0..<40 {
            try realm.write {
                // Half the commits change one object (the path that shifts keys in place).
                let operations = Bool.random(using: &random) ? 1 : Int.random(in: 2...12, using: &random)
                for _ in 0..<operations {
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0:
                        Self.add(nextID, realm, &random)
                        ids.append(nextID)
                        nextID += 1
                    case 1 where !ids.isEmpty:
                        let id = ids.remove(at: Int.random(in: 0..<ids.count, using: &random))
                        realm.delete(realm.object(ofType: ScoredEntry.self, forPrimaryKey: id)!)
                    default:
                        // Half the changes go to an object the result held before this commit, so
                        // that the small results (cases 6 and 7 hold a few dozen objects) see some.
                        let inResult = Bool.random(using: &random) ? contents.randomElement(using: &random) : nil
                        guard let id = inResult ?? ids.randomElement(using: &random), let entry = realm.object(ofType: ScoredEntry.self, forPrimaryKey: id) else { continue }
                        switch Int.random(in: 0..<3, using: &random) {
                        case 0: entry.score = Int.random(in: 0..<2_000, using: &random)
                        case 1: entry.name = Self.name(&random)
                        default: entry.flag.toggle()
                        }
                    }
                }
            }
            realm.refresh()
            let now = results.map(\.id)
            for change in deliveries {
                guard case .update(_, let deletions, let insertions, let modifications) = change else { continue }
                for index in deletions.reversed() { contents.remove(at: index) }
                for index in insertions { contents.insert(now[index], at: index) }
                #expect(modifications.allSatisfy { $0 < now.count }, "case \(kind) seed \(seed) step \(step)")
            }
            deliveries = []
            #expect(contents == now, "case \(kind) seed \(seed) step \(step): the deliveries do not rebuild the results")
            contents = now
        }
        #if DEBUG
        // Debug builds count the deliveries that took the incremental path (and check each).
        #expect(counter.count > 0, "case \(kind): no delivery took the incremental path")
        #endif
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }

    @Test func aCommitOutsideTheResultDeliversNothing() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([ScoredEntry.self]))
        var random = SeededRandom(seed: 3)
        try realm.write { for id in 0..<1_000 { Self.add(id, realm, &random) } }
        let results = realm.objects(ScoredEntry.self).filter("score < 0").sorted(byKeyPath: "name")
        var deliveries = 0
        let token = results.observe { _ in deliveries += 1 }
        realm.refresh()
        #expect(deliveries == 1)
        try realm.write { realm.object(ofType: ScoredEntry.self, forPrimaryKey: 5)!.score += 1 }
        realm.refresh()
        #expect(deliveries == 1, "a commit that changed no object in the result, before or after, was delivered")
        try realm.write { realm.object(ofType: ScoredEntry.self, forPrimaryKey: 5)!.score = -1 }
        realm.refresh()
        #expect(deliveries == 2, "an object entering the result was not delivered")
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }
}
