import Foundation
import Testing

// Exit tests and the cooperative pool.
//
// Swift Testing waits for an exit test's child by reading its output and back channel to the
// end, in tasks of the test: blocking reads, on the cooperative pool unless told otherwise.
// That pool has a thread per core, two on CI. Two exit tests whose children run for a while
// (a child that takes turns with the parent, or holds a reader until the parent says so) hold
// both threads, and every other test of the process stops: in CI a run stalled this way until
// the children's handshakes gave up, 900 s later, and then failed (the SIGILLs were children
// whose bodies threw on giving up). Suites with exit tests carry `.childProcesses`: their tests
// run with a task executor preference for a thread per job, so that those reads block threads
// of their own.

/// Runs each job on a thread of its own: for work that blocks (`ChildProcesses`).
final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread.detachNewThread { job.runSynchronously(on: executor) }
    }
}

/// The trait of suites whose tests start child processes (exit tests): see above.
package struct ChildProcesses: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared, operation: function)
    }
}

extension Trait where Self == ChildProcesses {
    /// Tests that start child processes wait for them on threads of their own, never on the
    /// cooperative pool (ChildProcesses.swift).
    package static var childProcesses: Self { ChildProcesses() }
}
