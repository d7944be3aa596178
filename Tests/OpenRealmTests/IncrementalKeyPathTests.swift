import Foundation
@testable import OpenRealm
import Testing

// Results observed with key paths, kept up to date from the change sets (Notifications/
// WatchedChanges.swift): only objects whose watched properties changed are modifications,
// through every kind of link a key path can follow, and the deliveries take the incremental
// path (debug builds count them, and check each against the library's full comparison).

@Suite struct IncrementalKeyPathTests {
    static let types = watchedModelTypes
    /// Sizes such that what one commit here makes count stays under an eighth of the result
    /// (beyond it the full comparison is the cheaper one, and is taken).
    static let itemCount = 1_200
    static let keeperCount = 24
    static let boardCount = 12

    /// Items sorted by name in the tests (no watched change here renames one, so positions
    /// stay), each with a keeper, another keeper in a list, a mentor (an item before it) and a
    /// board listing it.
    static func populate(_ realm: Realm) throws {
        try realm.write {
            let keepers = (0..<keeperCount).map { id in
                realm.create(WatchedKeeper.self, value: ["id": id, "rank": id, "pet": ["name": "p\(id)", "age": id]])
            }
            let boards = (0..<boardCount).map { realm.create(WatchedBoard.self, value: ["id": $0, "title": "b\($0)"]) }
            var items: [WatchedItem] = []
            for id in 0..<itemCount {
                let name = String(format: "n%05d", (id * 7_919) % itemCount)
                let item = realm.create(WatchedItem.self, value: ["id": id, "score": id % 50, "name": name])
                item.keeper = keepers[id % keeperCount]
                item.keepers.append(keepers[(id / 3) % keeperCount])
                item.mentor = id == 0 ? nil : items[id / 3]
                boards[id % boardCount].items.append(item)
                items.append(item)
            }
        }
    }

    /// One key path, a commit that changes what it watches, and the ids it must report
    /// modified (from the objects as they are after the commit); then a commit that changes
    /// the same objects only in properties it does not watch.
    struct Case: Sendable, CustomStringConvertible {
        let keyPath: String
        let watched: @Sendable (Realm) -> Void
        let expected: @Sendable (Realm) -> Set<Int>
        let unwatched: @Sendable (Realm) -> Void
        var description: String { keyPath }
    }

    static func keeper3(_ realm: Realm) -> WatchedKeeper { realm.object(ofType: WatchedKeeper.self, forPrimaryKey: 3)! }
    static func ids(_ realm: Realm, _ filter: (WatchedItem) -> Bool) -> Set<Int> { Set(realm.objects(WatchedItem.self).filter(filter).map(\.id)) }

    static let cases: [Case] = [
        Case(keyPath: "score", watched: { realm in
            for id in [5, 77, 300] { realm.object(ofType: WatchedItem.self, forPrimaryKey: id)!.score += 1 }
        }, expected: { _ in [5, 77, 300] }, unwatched: { realm in
            realm.object(ofType: WatchedItem.self, forPrimaryKey: 5)!.keeper = nil
        }),
        Case(keyPath: "keeper.rank", watched: { keeper3($0).rank += 100 },
             expected: { realm in ids(realm) { $0.keeper?.id == 3 } }, unwatched: { keeper3($0).note = "unwatched" }),
        Case(keyPath: "keepers.rank", watched: { keeper3($0).rank += 100 },
             expected: { realm in ids(realm) { $0.keepers.contains { $0.id == 3 } } }, unwatched: { keeper3($0).note = "unwatched" }),
        Case(keyPath: "keeper.pet.age", watched: { keeper3($0).pet!.age += 1 },
             expected: { realm in ids(realm) { $0.keeper?.id == 3 } }, unwatched: { keeper3($0).pet!.name = "unwatched" }),
        Case(keyPath: "boards.title", watched: { $0.object(ofType: WatchedBoard.self, forPrimaryKey: 1)!.title = "renamed" },
             expected: { realm in ids(realm) { $0.id % boardCount == 1 } }, unwatched: { realm in
                 realm.object(ofType: WatchedBoard.self, forPrimaryKey: 1)!.items.append(realm.object(ofType: WatchedItem.self, forPrimaryKey: 0)!)
             }),
        Case(keyPath: "mentor.score", watched: { $0.object(ofType: WatchedItem.self, forPrimaryKey: 62)!.score += 1 },
             expected: { realm in ids(realm) { $0.mentor?.id == 62 } }, unwatched: { $0.object(ofType: WatchedItem.self, forPrimaryKey: 62)!.name += "x" }),
    ]

    @Test(arguments: cases)
    func onlyObjectsWhoseWatchedPropertiesChangedAreModified(_ observed: Case) throws {
        let counter = IncrementalDeliveries.Counter()
        try IncrementalDeliveries.$counter.withValue(counter) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration(Self.types))
            try Self.populate(realm)
            let results = realm.objects(WatchedItem.self).sorted(byKeyPath: "name")
            var deliveries: [RealmCollectionChange<Results<WatchedItem>>] = []
            let token = results.observe(keyPaths: [observed.keyPath]) { deliveries.append($0) }
            realm.refresh()
            deliveries = []

            try realm.write { observed.watched(realm) }
            realm.refresh()
            let expected = observed.expected(realm)
            #expect(!expected.isEmpty)
            let modified = deliveries.flatMap { change -> [Int] in
                guard case .update(let now, _, _, let modifications) = change else { return [] }
                return modifications.map { now[$0].id }
            }
            #expect(deliveries.count == 1)
            #expect(Set(modified) == expected, "\(observed): modified \(modified.sorted())")
            deliveries = []

            try realm.write { observed.unwatched(realm) }
            realm.refresh()
            for change in deliveries {
                guard case .update(_, _, _, let modifications) = change else { continue }
                #expect(modifications.isEmpty, "\(observed): a change to unwatched properties was reported")
            }
            #if DEBUG
            #expect(counter.count > 0, "\(observed): no delivery took the incremental path")
            #expect(counter.fullComparisons == 0, "\(observed): \(counter.fullComparisons) deliveries compared in full")
            #endif
            withExtendedLifetime(token) {}
            try RoundTripTests.verify(folder)
        }
    }

    @Test func aDeletedLinkTargetModifiesTheObjectsThatLinkedToIt() throws {
        let counter = IncrementalDeliveries.Counter()
        try IncrementalDeliveries.$counter.withValue(counter) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration(Self.types))
            try Self.populate(realm)
            let results = realm.objects(WatchedItem.self).filter("score < 40").sorted(byKeyPath: "name")
            var modified: [Int] = []
            let token = results.observe(keyPaths: ["keeper.rank"]) { change in
                if case .update(let now, _, _, let modifications) = change { modified += modifications.map { now[$0].id } }
            }
            realm.refresh()
            let linking = Self.ids(realm) { $0.keeper?.id == 4 && $0.score < 40 }
            // The link is cleared: the link itself is on the watched path.
            try realm.write { realm.delete(realm.object(ofType: WatchedKeeper.self, forPrimaryKey: 4)!) }
            realm.refresh()
            #expect(Set(modified) == linking)
            #if DEBUG
            #expect(counter.fullComparisons == 0)
            #endif
            withExtendedLifetime(token) {}
            try RoundTripTests.verify(folder)
        }
    }
}
