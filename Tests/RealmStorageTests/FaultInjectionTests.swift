import Foundation
import Testing
@testable import RealmStorage

/// The fault matrix: the workload runs with its Nth write, sync or size change failing with
/// ENOSPC or EIO, for N = 1, 2, 3… until the workload no longer reaches N. The commit must
/// throw the matching typed error, the store must stay at the version it had (for readers old
/// and new, and on disk), the next write transactions must commit normally, and the file must
/// reopen verified with the last acknowledged commit.
@Suite struct FaultInjectionTests {
    static func expectedCode(for errorNumber: Int32) -> StorageError.Code {
        errorNumber == ENOSPC ? .outOfDiskSpace : .ioFailure
    }

    /// Runs the workload with call `n` of kind `call` failing; false when the workload
    /// makes fewer than `n` such calls (the fault never fires).
    static func runWorkload(failing call: FaultInjectingFile.Call, at n: Int, errno errorNumber: Int32) throws -> Bool {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let context = "\(call) #\(n) failing with errno \(errorNumber)"
        let box = WrappedFileBox<FaultInjectingFile>()
        // The workload runs to its end, or to the step after the one that failed.
        var lastStep = CrashWorkload.steps.count - 1
        do {
            let options = StoreOptions(limits: CrashWorkload.limits, fileWrapper: box.wrapper {
                FaultInjectingFile(wrapping: $0, failing: call, at: n, errno: errorNumber)
            })
            let store = try Store.open(path: path, options: options)
            var step = 0
            while step <= lastStep {
                defer { step += 1 }
                let before = CrashWorkload.expected[step]
                let reader = store.beginRead()
                do {
                    try CrashWorkload.commit(step: step, on: store)
                } catch {
                    let file = try #require(box.file)
                    #expect(file.didFail, "step \(step + 1) failed without an injected fault: \(error); \(context)")
                    #expect(error.code == expectedCode(for: errorNumber), "step \(step + 1) threw \(error); \(context)")
                    #expect(error.errno == errorNumber, "the error must carry the errno: \(error); \(context)")

                    // The store, its readers and the file all stay at the previous version.
                    #expect(store.latestVersion.value == before.version, "\(context)")
                    let current = try DatabaseDump(store.beginRead())
                    #expect(current == before, "after the failed commit: \(current.differences(from: before)); \(context)")
                    #expect(try DatabaseDump(reader) == before, "a reader from before the failure; \(context)")
                    try store.verify()
                    try checkCopy(of: path, at: directory.path("copy-\(step).realm"), equals: before, context: "the file after the failed commit; \(context)")

                    // The next write transaction commits normally, and so does the one after.
                    try CrashWorkload.commit(step: step, on: store)
                    lastStep = min(step + 1, lastStep)
                }
                let after = try DatabaseDump(store.beginRead())
                #expect(after == CrashWorkload.expected[step + 1], "step \(step + 1): \(after.differences(from: CrashWorkload.expected[step + 1])); \(context)")
            }
            try store.verify()
        }
        let fired = try #require(box.file).didFail
        // Closed (the last reference went above); reopen the plain file.
        let store = try Store.open(path: path, options: StoreOptions(create: false))
        try store.verify()
        let reopened = try DatabaseDump(store.beginRead())
        let last = CrashWorkload.expected[lastStep + 1]
        #expect(reopened == last, "after reopening: \(reopened.differences(from: last)); \(context)")
        return fired
    }

    /// Opens a byte copy of the file at `path` (the store there still has it open) and checks
    /// it holds `expected`.
    static func checkCopy(of path: String, at copy: String, equals expected: DatabaseDump, context: String) throws {
        try Data(contentsOf: URL(fileURLWithPath: path)).write(to: URL(fileURLWithPath: copy))
        let store = try Store.open(path: copy, options: StoreOptions(create: false))
        try store.verify()
        let dump = try DatabaseDump(store.beginRead())
        #expect(dump == expected, "\(dump.differences(from: expected)); \(context)")
    }

    @Test(arguments: FaultInjectingFile.Call.allCases, [ENOSPC, EIO])
    func failedCallLeavesTheLastCommitIntact(call: FaultInjectingFile.Call, errorNumber: Int32) throws {
        var faults = 0
        for n in 1... {
            guard try Self.runWorkload(failing: call, at: n, errno: errorNumber) else { break }
            faults += 1
            if n > 10_000 {
                Issue.record("the fault at \(call) #\(n) still fires: the workload never ends")
                break
            }
        }
        // Every commit writes and syncs; the file grows at least once.
        #expect(faults >= (call == .setSize ? 1 : CrashWorkload.steps.count), "\(call) failed only \(faults) times")
    }

    @Test func failedCommitEndsItsTransaction() throws {
        let directory = TemporaryDirectory()
        let options = StoreOptions(limits: CrashWorkload.limits, fileWrapper: { FaultInjectingFile(wrapping: $0, failing: .sync, at: 1, errno: EIO) })
        let store = try Store.open(path: directory.path(), options: options)
        let transaction = try store.beginWrite()
        let table = try transaction.createTable("T", columns: [ColumnSpec(name: "n", type: .int)])
        try transaction.insert(table, values: [.int(1)])
        #expect(throws: StorageError.self) { try transaction.commit() }
        // The transaction is over: no second attempt, no further changes.
        let again = #expect(throws: StorageError.self) { try transaction.commit() }
        #expect(again?.code == .transactionEnded)
        let insert = #expect(throws: StorageError.self) { try transaction.insert(table, values: [.int(2)]) }
        #expect(insert?.code == .transactionEnded)
        // And it released the write lane.
        let next = try store.beginWrite()
        try next.createTable("T", columns: [ColumnSpec(name: "n", type: .int)])
        try next.commit()
        try store.verify()
    }
}
