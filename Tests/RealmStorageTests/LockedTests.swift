import Dispatch
import Testing
@testable import RealmStorage

/// `Locked` is the one lock of the engine and the library: threads that change its state at
/// the same time lose no change, and under ThreadSanitizer (CI's TSan step) they race nowhere,
/// though TSan does not see the futex underneath (Locked.swift).
@Suite struct LockedTests {
    @Test func threadsChangingTheStateTogetherLoseNothing() {
        struct Tally {
            var count = 0
            var seen: [Int] = []
        }
        let tally = Locked(Tally())
        let threads = 4, rounds = 2_000
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for round in 0..<rounds {
                tally.withLock { state in
                    state.count += 1
                    state.seen.append(thread * rounds + round)
                }
            }
        }
        let (count, seen) = tally.withLock { state in (state.count, state.seen.sorted()) }
        #expect(count == threads * rounds)
        #expect(seen == Array(0..<threads * rounds))
    }

    @Test func anErrorThrownUnderTheLockLeavesItFree() {
        struct Refused: Error {}
        let value = Locked(0)
        #expect(throws: Refused.self) {
            try value.withLock { (state: inout Int) throws(Refused) in
                state = 1
                throw Refused()
            }
        }
        #expect(value.withLock { $0 } == 1)
    }
}
