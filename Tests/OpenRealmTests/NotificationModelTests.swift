import Foundation
import OpenRealm
import Testing

/// Model-based: random transactions against a sorted and filtered `Results`; after each
/// notification, applying its deletions and insertions to the keys before gives the keys
/// after, and the modifications name exactly the objects changed in place.
@Suite struct NotificationModelTests {
    /// One chore in the model.
    struct Entry: Equatable {
        var rank: Int
        var done: Bool
        var title: String
    }

    /// What a notification said, with the contents it was delivered with.
    struct Delivery {
        let change: CollectionEvent
        let ids: [Int]
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func randomWritesKeepSortedFilteredResultsInStep(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let results = realm.objects(Chore.self).filter("done == false AND rank < 40")
            .sorted(by: [SortDescriptor(keyPath: "rank"), SortDescriptor(keyPath: "id")])
        let deliveries = Recorder<Delivery>()
        let token = results.observe { change in
            // The collection as the change describes it (read now, in the block).
            switch change {
            case .initial(let chores), .update(let chores, _, _, _):
                deliveries.record(Delivery(change: CollectionEvent(change), ids: chores.map(\.id)))
            case .error(let error):
                Issue.record("\(error)")
            }
        }
        realm.refresh()
        var snapshot = try #require(deliveries.take().first).ids
        var model: [Int: Entry] = [:]
        var nextID = 1

        for step in 0..<80 {
            // A transaction of one to five operations; the ids it writes to.
            var operations: [@Sendable (Realm) -> Void] = []
            var touched = Set<Int>()
            let modelBefore = model
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let existing = model.keys.sorted()
                let pick = existing.isEmpty ? nil : existing[Int.random(in: 0..<existing.count, using: &random)]
                switch (Int.random(in: 0..<10, using: &random), pick) {
                case (0..<3, _), (_, nil):
                    let id = nextID
                    nextID += 1
                    let entry = Entry(rank: Int.random(in: 0..<50, using: &random), done: Bool.random(using: &random), title: "t\(id)")
                    model[id] = entry
                    operations.append { $0.create(Chore.self, value: ["id": id, "rank": entry.rank, "done": entry.done, "title": entry.title]) }
                case (3, let id?):
                    model[id] = nil
                    operations.append { $0.delete($0.object(ofType: Chore.self, forPrimaryKey: id)!) }
                case (4, let id?):
                    // Deleted and added again under the same key: another object.
                    let entry = Entry(rank: Int.random(in: 0..<50, using: &random), done: false, title: "again")
                    model[id] = entry
                    operations.append {
                        $0.delete($0.object(ofType: Chore.self, forPrimaryKey: id)!)
                        $0.create(Chore.self, value: ["id": id, "rank": entry.rank, "title": entry.title])
                    }
                case (5..<7, let id?):
                    let rank = Int.random(in: 0..<50, using: &random)
                    model[id]!.rank = rank
                    operations.append { $0.object(ofType: Chore.self, forPrimaryKey: id)!.rank = rank }
                case (7, let id?):
                    model[id]!.done.toggle()
                    let done = model[id]!.done
                    operations.append { $0.object(ofType: Chore.self, forPrimaryKey: id)!.done = done }
                case (_, let id?):
                    let title = "s\(step)"
                    model[id]!.title = title
                    operations.append { $0.object(ofType: Chore.self, forPrimaryKey: id)!.title = title }
                }
                if let pick { touched.insert(pick) }
            }
            // Objects whose values differ at the end (setting a value it has is no change).
            let changed = Set(model.keys.filter { modelBefore[$0] != nil && modelBefore[$0] != model[$0] })
            let run = operations
            let skip = Int.random(in: 0..<8, using: &random) == 0
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where !skip:
                // Another thread's commit, heard at refresh.
                writeOnAnotherThread(configuration) { realm in run.forEach { $0(realm) } }
                realm.refresh()
            case 1 where !skip:
                // Another thread's commit, heard when a write of this realm begins.
                writeOnAnotherThread(configuration) { realm in run.forEach { $0(realm) } }
                try realm.write {}
            default:
                // This realm's own commit, heard at its next refresh; or skipped.
                try realm.write(withoutNotifying: skip ? [token] : []) { run.forEach { $0(realm) } }
                realm.refresh()
            }

            let delivered = deliveries.take()
            if skip {
                #expect(delivered.isEmpty, "seed \(seed), step \(step): a skipped write was reported")
                // The caller applied the write itself.
                snapshot = results.map(\.id)
            }
            for delivery in delivered {
                let before = snapshot
                for index in delivery.change.deletions.reversed() { snapshot.remove(at: index) }
                for index in delivery.change.insertions { snapshot.insert(delivery.ids[index], at: index) }
                #expect(snapshot == delivery.ids, "seed \(seed), step \(step): \(delivery.change) applied to \(before)")
                // Modifications: objects present before and after, in place, that the
                // transaction touched.
                let moved = Set(delivery.change.insertions)
                for index in delivery.change.modifications {
                    #expect(!moved.contains(index), "seed \(seed), step \(step): \(index) is both inserted and modified")
                    #expect(touched.contains(delivery.ids[index]), "seed \(seed), step \(step): \(delivery.ids[index]) was not changed")
                }
                let inserted = Set(delivery.change.insertions.map { delivery.ids[$0] })
                let modified = Set(delivery.change.modifications.map { delivery.ids[$0] })
                for id in changed where before.contains(id) && delivery.ids.contains(id) && !inserted.contains(id) {
                    #expect(modified.contains(id), "seed \(seed), step \(step): \(id) changed but was not reported")
                }
            }
            let expected = model.filter { !$0.value.done && $0.value.rank < 40 }
                .sorted { ($0.value.rank, $0.key) < ($1.value.rank, $1.key) }.map(\.key)
            #expect(results.map(\.id) == expected, "seed \(seed), step \(step): the results differ from the model")
            #expect(snapshot == expected, "seed \(seed), step \(step): the notified contents differ from the model")
        }
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }
}
