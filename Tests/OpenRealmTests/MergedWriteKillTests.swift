import Foundation
import OpenRealm
import RealmStorage
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Child processes write through one RealmActor from many tasks, so that their writes are
/// merged into shared commits that share syncs, until they SIGKILL themselves. A task waits
/// for each write before its next, so the objects of a task that survive a kill must be the
/// first n of its numbers, n at least what the child logged as acknowledged; and an object
/// of a write that threw (undone back to its savepoint inside a merged commit) must never
/// be there.
@Suite(.childProcesses) struct MergedWriteKillTests {
    static let tasks = 16
    static let rounds = 4
    static let stride = 1_000_000
    /// Added to the number of an object created by a write that then throws.
    static let thrownOffset = 500_000

    struct Refused: Error {}

    static func configuration(_ path: String) -> Realm.Configuration {
        Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Person.self])
    }

    static func writeUntilKilled(path: String, log: String, delay: UInt32) async throws {
        let store = RealmActor(configuration: configuration(path))
        // Where each task's numbers go on: how many objects it has (a prefix, as checked).
        let ids = try await store.read { realm in Array(realm.objects(Person.self).map(\.id)) }
        let starts = (0..<tasks).map { t in ids.filter { $0 / stride == t && $0 % stride < thrownOffset }.count }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        // The log, written one committer's line at a time.
        let handle = try Locked(FileHandle(forWritingTo: URL(fileURLWithPath: log)))
        Thread.detachNewThread {
            usleep(delay)
            kill(getpid(), SIGKILL)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var count = starts[t]
                    while true {
                        let id = t * stride + count
                        if count % 3 == 2 {
                            _ = try? await store.write { realm in
                                realm.create(Person.self, value: ["id": id + thrownOffset, "name": "thrown"])
                                throw Refused()
                            }
                        }
                        try await store.write { realm in _ = realm.create(Person.self, value: ["id": id, "name": "p\(id)"]) }
                        count += 1
                        handle.withLock { $0.write(Data("\(t) \(count)\n".utf8)) }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Per writer, the highest count the child logged after a write returned.
    static func acknowledged(in log: String, writers: Int) -> [Int] {
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").reduce(into: [Int](repeating: 0, count: writers)) { result, line in
            let fields = line.split(separator: " ")
            guard fields.count == 2, let writer = Int(fields[0]), let count = Int(fields[1]) else { return }
            result[writer] = max(result[writer], count)
        }
    }

    /// Checks what a killed child left: only kept writes' objects, each writer's a prefix of
    /// its numbers at least as long as it logged. Returns how many objects there are.
    static func checkRecovered(path: String, log: String, writers: Int, round: Int) throws -> Int {
        let realm = try Realm(configuration: configuration(path))
        let people = Array(realm.objects(Person.self))
        #expect(people.allSatisfy { $0.name == "p\($0.id)" }, "round \(round): an object of a write that threw survived, or a name is wrong")
        var counts = [Int](repeating: 0, count: writers)
        for w in 0..<writers {
            let ids = people.map(\.id).filter { $0 / stride == w }.sorted()
            #expect(ids == (0..<ids.count).map { w * stride + $0 }, "round \(round): writer \(w) holds no prefix")
            counts[w] = ids.count
        }
        let acknowledged = acknowledged(in: log, writers: writers)
        for w in 0..<writers {
            #expect(counts[w] >= acknowledged[w], "round \(round): writer \(w) had \(acknowledged[w]) acknowledged, \(counts[w]) recovered")
        }
        return counts.reduce(0, +)
    }

    @Test func acknowledgedMergedWritesSurviveSIGKILL() async throws {
        let folder = TestFolder()
        let path = folder.url.appendingPathComponent("kill.realm").path
        let log = folder.url.appendingPathComponent("acknowledged.log").path
        var recovered = 0
        for round in 0..<Self.rounds {
            let delay = UInt32(150_000 + 100_000 * round)
            await #expect(processExitsWith: .signal(SIGKILL), "round \(round)") { [path = path as String, log = log as String, delay = delay as UInt32] in
                try await MergedWriteKillTests.writeUntilKilled(path: path, log: log, delay: delay)
            }
            recovered = try Self.checkRecovered(path: path, log: log, writers: Self.tasks, round: round)
        }
        #expect(recovered >= Self.tasks, "the children must have written (\(recovered) objects recovered)")
    }
}
