import Foundation
import OpenRealm
import Testing
import TestSupport

/// Model-based: random transactions against a sorted and filtered `Results`; after each
/// notification, applying its deletions and insertions to the keys before gives the keys
/// after, and the modifications name exactly the objects changed in place. Once with a
/// callback, once with a stream.
@Suite struct NotificationModelTests {
    /// One chore in the model.
    struct Entry: Equatable {
        var rank: Int
        var done: Bool
        var title: String
    }

    /// The chores the realm should hold, and random transactions changing them.
    struct Model {
        var entries: [Int: Entry] = [:]
        var nextID = 1

        /// The ids the results should show: not done, rank under 40, by rank then id.
        var expected: [Int] {
            entries.filter { !$0.value.done && $0.value.rank < 40 }.sorted { ($0.value.rank, $0.key) < ($1.value.rank, $1.key) }.map(\.key)
        }

        /// A transaction of one to five operations, applied to the model: what it does to a
        /// realm, and the ids it wrote to.
        mutating func transaction(_ random: inout SeededRandom, step: Int) -> (operations: [@Sendable (Realm) -> Void], touched: Set<Int>) {
            var operations: [@Sendable (Realm) -> Void] = []
            var touched = Set<Int>()
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let existing = entries.keys.sorted()
                let pick = existing.isEmpty ? nil : existing[Int.random(in: 0..<existing.count, using: &random)]
                switch (Int.random(in: 0..<10, using: &random), pick) {
                case (0..<3, _), (_, nil):
                    let id = nextID
                    nextID += 1
                    let entry = Entry(rank: Int.random(in: 0..<50, using: &random), done: Bool.random(using: &random), title: "t\(id)")
                    entries[id] = entry
                    operations.append { $0.create(Chore.self, value: ["id": id, "rank": entry.rank, "done": entry.done, "title": entry.title]) }
                case (3, let id?):
                    entries[id] = nil
                    operations.append { $0.delete($0.object(ofType: Chore.self, forPrimaryKey: id)!) }
                case (4, let id?):
                    // Deleted and added again under the same key: another object.
                    let entry = Entry(rank: Int.random(in: 0..<50, using: &random), done: false, title: "again")
                    entries[id] = entry
                    operations.append {
                        $0.delete($0.object(ofType: Chore.self, forPrimaryKey: id)!)
                        $0.create(Chore.self, value: ["id": id, "rank": entry.rank, "title": entry.title])
                    }
                case (5..<7, let id?):
                    let rank = Int.random(in: 0..<50, using: &random)
                    entries[id]!.rank = rank
                    operations.append { $0.object(ofType: Chore.self, forPrimaryKey: id)!.rank = rank }
                case (7, let id?):
                    entries[id]!.done.toggle()
                    let done = entries[id]!.done
                    operations.append { $0.object(ofType: Chore.self, forPrimaryKey: id)!.done = done }
                case (_, let id?):
                    let title = "s\(step)"
                    entries[id]!.title = title
                    operations.append { $0.object(ofType: Chore.self, forPrimaryKey: id)!.title = title }
                }
                if let pick { touched.insert(pick) }
            }
            return (operations, touched)
        }

        /// The ids whose entries differ from `before` (setting a value it has is no change).
        func changed(since before: [Int: Entry]) -> Set<Int> {
            Set(entries.keys.filter { before[$0] != nil && before[$0] != entries[$0] })
        }
    }

    /// What a notification said, with the contents it was delivered with.
    struct Delivery {
        let change: CollectionEvent
        let ids: [Int]
    }

    /// Applies `delivery` to `snapshot` and checks it against what the transactions did.
    static func check(_ delivery: Delivery, _ snapshot: inout [Int], touched: Set<Int>, changed: Set<Int>, _ context: String) {
        let before = snapshot
        for index in delivery.change.deletions.reversed() { snapshot.remove(at: index) }
        for index in delivery.change.insertions { snapshot.insert(delivery.ids[index], at: index) }
        #expect(snapshot == delivery.ids, "\(context): \(delivery.change) applied to \(before)")
        // Modifications: objects present before and after, in place, that the transactions
        // touched.
        let moved = Set(delivery.change.insertions)
        for index in delivery.change.modifications {
            #expect(!moved.contains(index), "\(context): \(index) is both inserted and modified")
            #expect(touched.contains(delivery.ids[index]), "\(context): \(delivery.ids[index]) was not changed")
        }
        let inserted = Set(delivery.change.insertions.map { delivery.ids[$0] })
        let modified = Set(delivery.change.modifications.map { delivery.ids[$0] })
        for id in changed where before.contains(id) && delivery.ids.contains(id) && !inserted.contains(id) {
            #expect(modified.contains(id), "\(context): \(id) changed but was not reported")
        }
    }

    static func results(_ realm: Realm) -> Results<Chore> {
        realm.objects(Chore.self).filter("done == false AND rank < 40").sorted(by: [SortDescriptor(keyPath: "rank"), SortDescriptor(keyPath: "id")])
    }

    static func delivery(_ change: RealmCollectionChange<Results<Chore>>) -> Delivery? {
        switch change {
        case .initial(let chores), .update(let chores, _, _, _):
            // The collection as the change describes it (read now, where the change is handled).
            return Delivery(change: CollectionEvent(change), ids: chores.map(\.id))
        case .error(let error):
            Issue.record("\(error)")
            return nil
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func randomWritesKeepSortedFilteredResultsInStep(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let results = Self.results(realm)
        let deliveries = Recorder<Delivery>()
        let token = results.observe { change in Self.delivery(change).map(deliveries.record) }
        realm.refresh()
        var snapshot = try #require(deliveries.take().first).ids
        var model = Model()

        for step in 0..<80 {
            let before = model.entries
            let (operations, touched) = model.transaction(&random, step: step)
            let skip = Int.random(in: 0..<8, using: &random) == 0
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where !skip:
                // Another thread's commit, heard at refresh.
                writeOnAnotherThread(configuration) { realm in operations.forEach { $0(realm) } }
                realm.refresh()
            case 1 where !skip:
                // Another thread's commit, heard when a write of this realm begins.
                writeOnAnotherThread(configuration) { realm in operations.forEach { $0(realm) } }
                try realm.write {}
            default:
                // This realm's own commit, heard at its next refresh; or skipped.
                try realm.write(withoutNotifying: skip ? [token] : []) { operations.forEach { $0(realm) } }
                realm.refresh()
            }

            let delivered = deliveries.take()
            if skip {
                #expect(delivered.isEmpty, "seed \(seed), step \(step): a skipped write was reported")
                // The caller applied the write itself.
                snapshot = results.map(\.id)
            }
            for delivery in delivered {
                Self.check(delivery, &snapshot, touched: touched, changed: model.changed(since: before), "seed \(seed), step \(step)")
            }
            #expect(results.map(\.id) == model.expected, "seed \(seed), step \(step): the results differ from the model")
            #expect(snapshot == model.expected, "seed \(seed), step \(step): the notified contents differ from the model")
        }
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }

    /// A stream gets one element per refresh however many commits came: each step commits one
    /// to four transactions from another thread, then refreshes. The last of them always
    /// renames chore 0 (rank 0, so always shown): every step has something to report.
    @Test(arguments: [1, 2, 3, 4] as [UInt64]) @TestActor
    func randomCommitsReachAStreamInStep(seed: UInt64) async throws {
        var random = SeededRandom(seed: seed)
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        var model = Model()
        model.entries[0] = Entry(rank: 0, done: false, title: "marker")
        try realm.write { realm.create(Chore.self, value: ["id": 0, "rank": 0, "title": "marker"]) }
        let results = Self.results(realm)
        var changes = results.changes.makeAsyncIterator()
        var snapshot = try #require(await changes.next(isolation: #isolation).flatMap(Self.delivery)).ids

        for step in 0..<40 {
            let before = model.entries
            var touched: Set<Int> = [0]
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                // Chore 0 stays as it is but for its title.
                model.entries[0] = nil
                let (operations, written) = model.transaction(&random, step: step)
                model.entries[0] = before[0]
                touched.formUnion(written)
                await writeElsewhere(configuration) { realm in operations.forEach { $0(realm) } }
            }
            model.entries[0]!.title = "step \(step)"
            await writeElsewhere(configuration) { $0.object(ofType: Chore.self, forPrimaryKey: 0)!.title = "step \(step)" }
            realm.refresh()

            let context = "seed \(seed), step \(step)"
            let delivery = try #require(await changes.next(isolation: #isolation).flatMap(Self.delivery), "\(context)")
            #expect(!delivery.change.isInitial, "\(context)")
            Self.check(delivery, &snapshot, touched: touched, changed: model.changed(since: before), context)
            #expect(snapshot == model.expected, "\(context): the notified contents differ from the model")
        }
        try RoundTripTests.verify(folder)
    }
}
