import Dispatch
import Foundation
@testable import OpenRealm
import Testing

/// A realm's context reads the realm without retaining it; the realm's last reference may go
/// on any thread meanwhile (RealmContext.swift).
@Suite struct RealmContextTests {
    /// Set in a deinit, read after it.
    final class Seen: @unchecked Sendable {
        var handedOut: Bool?
    }

    final class Probe {
        let seen: Seen
        var reference: UnretainedReference<Probe>?
        init(_ seen: Seen) { self.seen = seen }
        deinit { seen.handedOut = reference?.retainedUnlessGoing() != nil }
    }

    @Test func aLiveObjectIsHandedOut() {
        let seen = Seen()
        weak var gone: Probe?
        do {
            let probe = Probe(seen)
            gone = probe
            let handedOut = UnretainedReference(probe).retainedUnlessGoing()
            #expect(handedOut === probe)
        }
        // Neither the reference nor what it handed out kept a count: the object went with its
        // last owner.
        #expect(gone == nil)
    }

    /// What a block on the realm's queue sees when the realm's last reference went on another
    /// thread a moment before: a retain then would outlive the deinit, and the runtime stops
    /// the process ("deallocated with non-zero retain count").
    @Test func anObjectWhoseDeinitBeganIsNotHandedOut() {
        let seen = Seen()
        do {
            let probe = Probe(seen)
            probe.reference = UnretainedReference(probe)
        }
        #expect(seen.handedOut == false)
    }

    /// The case CI met: a queue realm let go right after `writeAsync`. Its commit's callback,
    /// run on the store's sync thread, then holds the realm's last reference, while the queue
    /// refreshes the realm for the version that commit published.
    @Test func realmsLetGoWhileTheirCommitsAreAnsweredGoCleanly() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let queue = DispatchQueue(label: "let go")
        let writes = 200
        let answered = DispatchGroup()
        for i in 0..<writes {
            answered.enter()
            queue.async {
                let realm = try! Realm(configuration: configuration, queue: queue)
                realm.writeAsync {
                    realm.create(Person.self, value: ["id": i, "name": "p\(i)"])
                } onComplete: { error in
                    #expect(error == nil)
                    answered.leave()
                }
            }
        }
        await withCheckedContinuation { continuation in
            answered.notify(queue: .global()) { continuation.resume() }
        }
        let count: Int = await AsyncWriteCallbackTests.onQueue(queue) { done in
            done(try! Realm(configuration: configuration, queue: queue).objects(Person.self).count)
        }
        #expect(count == writes)
    }
}
