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

/// Child processes write from many threads, each with a realm of its own, so that the writes
/// of threads waiting in line ride on one another's commits (WriteTransaction+Relay.swift), until they
/// SIGKILL themselves. A thread waits for each write before its next, so the objects of a
/// thread that survive a kill must be the first n of its numbers, n at least what the child
/// logged as acknowledged; and an object of a write that threw (undone alone inside a relay)
/// must never be there.
@Suite(.childProcesses) struct RelayedWriteKillTests {
    static let threads = 12
    static let rounds = 3
    static let stride = MergedWriteKillTests.stride
    static let thrownOffset = MergedWriteKillTests.thrownOffset

    static func writeUntilKilled(path: String, log: String, delay: UInt32) throws {
        let configuration = MergedWriteKillTests.configuration(path)
        let ids = try Realm(configuration: configuration).objects(Person.self).map(\.id)
        let starts = (0..<threads).map { t in ids.filter { $0 / stride == t && $0 % stride < thrownOffset }.count }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        // The log, written one committer's line at a time.
        let handle = try Locked(FileHandle(forWritingTo: URL(fileURLWithPath: log)))
        for t in 0..<threads {
            Thread.detachNewThread {
                guard let realm = try? Realm(configuration: configuration) else { return }
                var count = starts[t]
                while true {
                    let id = t * stride + count
                    if count % 3 == 2 {
                        _ = try? realm.write {
                            realm.create(Person.self, value: ["id": id + thrownOffset, "name": "thrown"])
                            throw MergedWriteKillTests.Refused()
                        }
                    }
                    guard (try? realm.write({ _ = realm.create(Person.self, value: ["id": id, "name": "p\(id)"]) })) != nil else { return }
                    count += 1
                    handle.withLock { $0.write(Data("\(t) \(count)\n".utf8)) }
                }
            }
        }
        usleep(delay)
        kill(getpid(), SIGKILL)
    }

    @Test func acknowledgedRelayedWritesSurviveSIGKILL() async throws {
        let folder = TestFolder()
        let path = folder.url.appendingPathComponent("kill.realm").path
        let log = folder.url.appendingPathComponent("acknowledged.log").path
        var recovered = 0
        for round in 0..<Self.rounds {
            let delay = UInt32(150_000 + 100_000 * round)
            await #expect(processExitsWith: .signal(SIGKILL), "round \(round)") { [path = path as String, log = log as String, delay = delay as UInt32] in
                try RelayedWriteKillTests.writeUntilKilled(path: path, log: log, delay: delay)
            }
            recovered = try MergedWriteKillTests.checkRecovered(path: path, log: log, writers: Self.threads, round: round)
        }
        #expect(recovered >= Self.threads, "the children must have written (\(recovered) objects recovered)")
    }
}
