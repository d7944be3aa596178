import Foundation
import OpenRealm
import RealmStorage
import Testing
import TestSupport

final class Account: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var balance = 0
}

/// Writers move money between accounts while readers sum every balance in frozen snapshots
/// shared between tasks: each snapshot must see the same total. `.ci/run` also runs this
/// suite under ThreadSanitizer.
@Suite struct TransferStressTests {
    static let accounts = 16
    static let opening = 1_000
    static let total = accounts * opening

    /// A writer with a realm of its own, as a request handler would have.
    actor Teller {
        let configuration: Realm.Configuration
        var random: SeededRandom
        init(_ configuration: Realm.Configuration, seed: UInt64) {
            self.configuration = configuration
            random = SeededRandom(seed: seed)
        }

        func transfer(times: Int) async throws {
            let realm = try await Realm.open(configuration: configuration)
            for _ in 0..<times {
                let from = Int(random.next() % UInt64(TransferStressTests.accounts))
                let to = Int(random.next() % UInt64(TransferStressTests.accounts))
                let amount = Int(random.next() % 50)
                try await realm.asyncWrite {
                    let source = realm.object(ofType: Account.self, forPrimaryKey: from)!
                    let target = realm.object(ofType: Account.self, forPrimaryKey: to)!
                    source.balance -= amount
                    target.balance += amount
                }
            }
        }
    }

    /// Takes snapshots of the newest version and has several tasks audit each one at once.
    actor Auditor {
        let configuration: Realm.Configuration
        init(_ configuration: Realm.Configuration) { self.configuration = configuration }

        /// Audits snapshots until `done` says the writers finished; returns how many it audited.
        func audit(until done: @Sendable () -> Bool) async throws -> Int {
            let realm = try await Realm.open(configuration: configuration)
            var audited = 0
            repeat {
                realm.refresh()
                let snapshot = Frozen(realm)
                let accounts = Frozen(realm.objects(Account.self))
                let totals = await withTaskGroup(of: [Int].self) { group in
                    for reader in 0..<4 {
                        group.addTask {
                            // Two ways to read: walking the objects and the column aggregate.
                            let walked = accounts.value.reduce(0) { $0 + $1.balance }
                            let summed: Int = snapshot.value.objects(Account.self).sum(ofProperty: "balance")
                            let looked = (0..<TransferStressTests.accounts).reduce(0) { sum, id in
                                sum + snapshot.value.object(ofType: Account.self, forPrimaryKey: (id + reader) % TransferStressTests.accounts)!.balance
                            }
                            return [walked, summed, looked]
                        }
                    }
                    var all: [Int] = []
                    for await totals in group { all += totals }
                    return all
                }
                #expect(totals == Array(repeating: TransferStressTests.total, count: 12))
                audited += 1
            } while !done()
            return audited
        }
    }

    /// Set when the writers are done (read by the auditors).
    final class Flag: Sendable {
        private let raised = Locked(false)
        func raise() { raised.withLock { $0 = true } }
        var isRaised: Bool { raised.withLock { $0 } }
    }

    @Test func everySnapshotSeesTheSameTotal() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Account.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for id in 0..<Self.accounts { realm.create(Account.self, value: ["id": id, "balance": Self.opening]) }
            }
        }
        let done = Flag()
        // A thread writing with blocking writes shares the write lane with the tasks.
        let threadDone = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { threadDone.signal() }
            guard let realm = try? Realm(configuration: configuration) else { return }
            for round in 0..<40 {
                try? realm.write {
                    let from = realm.object(ofType: Account.self, forPrimaryKey: round % Self.accounts)!
                    let to = realm.object(ofType: Account.self, forPrimaryKey: (round * 7 + 3) % Self.accounts)!
                    from.balance -= 5
                    to.balance += 5
                }
            }
        }
        thread.start()
        let audited = try await withThrowingTaskGroup(of: Int.self) { group in
            for auditor in 0..<2 {
                group.addTask { try await Auditor(configuration).audit(until: { done.isRaised }) }
                _ = auditor
            }
            try await withThrowingTaskGroup(of: Void.self) { writers in
                for seed in 0..<4 {
                    writers.addTask { try await Teller(configuration, seed: UInt64(seed + 1)).transfer(times: 60) }
                }
                try await writers.waitForAll()
            }
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    threadDone.wait()
                    continuation.resume()
                }
            }
            done.raise()
            var audited = 0
            for try await count in group { audited += count }
            return audited
        }
        #expect(audited >= 2)
        let realm = try Realm(configuration: configuration)
        let balances = realm.objects(Account.self).map(\.balance)
        #expect(balances.reduce(0, +) == Self.total)
        #expect(balances != Array(repeating: Self.opening, count: Self.accounts))    // money moved
    }
}
