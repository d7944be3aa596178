import Dispatch
import Foundation
import Testing
import TestSupport
@testable import OpenRealm
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `Realm.compact(configuration:)`: it replaces the file only when nothing has it open, and
/// says false at once otherwise (a live realm, a frozen snapshot, a RealmActor's realm,
/// another process). Killed children mid-compaction leave the old or the new file.
@Suite(.childProcesses) struct CompactTests {
    static func fill(_ configuration: Realm.Configuration, count: Int = 5_000) throws {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for i in 0..<count { realm.create(Person.self, value: ["id": i, "name": String(repeating: "n", count: 40), "email": "e\(i % 7)"]) }
        }
        try realm.write { realm.delete(realm.objects(Person.self).filter("id >= 100")) }
    }

    static func size(_ configuration: Realm.Configuration) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: configuration.path)[.size] as! Int
    }

    @Test func compactShrinksTheFileAndKeepsEveryObject() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        try Self.fill(configuration)
        let before = try Self.size(configuration)
        #expect(try Realm.compact(configuration: configuration))
        let after = try Self.size(configuration)
        #expect(after < before / 2, "compacted from \(before) to \(after) bytes")
        #expect(!FileManager.default.fileExists(atPath: configuration.path + ".compacting"))
        let realm = try Realm(configuration: configuration)
        #expect(Array(realm.objects(Person.self).sorted(byKeyPath: "id").map(\.id)) == Array(0..<100))
        #expect(realm.objects(Person.self).filter("email == 'e3'").count == 14)
        try realm.write { realm.create(Person.self, value: ["id": 100]) }
        try RoundTripTests.verify(configuration)
    }

    /// A realm kept private stays private: the compacted file takes the old one's mode.
    @Test func compactKeepsTheFilesPermissions() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        try Self.fill(configuration)
        #expect(chmod(configuration.path, 0o600) == 0)
        #expect(try Realm.compact(configuration: configuration))
        let mode = try FileManager.default.attributesOfItem(atPath: configuration.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func compactRefusesWithoutWaitingWhileARealmIsOpen() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        try Self.fill(configuration)
        let before = try Data(contentsOf: configuration.fileURL!)
        do {
            let realm = try Realm(configuration: configuration)
            #expect(try !Realm.compact(configuration: configuration))
            #expect(realm.objects(Person.self).count == 100)
        }
        #expect(try Data(contentsOf: configuration.fileURL!) == before)
        #expect(try Realm.compact(configuration: configuration), "compacts once the realm is closed")
    }

    @Test func compactRefusesWhileAFrozenSnapshotIsKept() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        try Self.fill(configuration)
        var frozen: Realm? = try Realm(configuration: configuration).freeze()
        #expect(try !Realm.compact(configuration: configuration))
        #expect(frozen?.objects(Person.self).count == 100)
        frozen = nil
        #expect(try Realm.compact(configuration: configuration))
    }

    @Test func compactRefusesWhileARealmActorHasTheRealm() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        try Self.fill(configuration)
        let store = RealmActor(configuration: configuration)
        #expect(try await store.read { $0.objects(Person.self).count } == 100)
        #expect(try !Realm.compact(configuration: configuration))
        await store.close()
        #expect(try Realm.compact(configuration: configuration))
    }

    @Test func compactOfAMissingOrInMemoryRealmIsFalseAndOfAReadOnlyOneThrows() throws {
        let folder = TestFolder()
        #expect(try !Realm.compact(configuration: folder.configuration([Person.self])))
        #expect(!FileManager.default.fileExists(atPath: folder.configuration().path), "compact creates no file")
        #expect(try !Realm.compact(configuration: Realm.Configuration(inMemoryIdentifier: "compact-\(UUID())")))
        var readOnly = folder.configuration([Person.self])
        readOnly.readOnly = true
        #expect { try Realm.compact(configuration: readOnly) } throws: { ($0 as? Realm.Error)?.code == .readOnly }
    }

    /// A crash during a compaction leaves `<name>.compacting`: the next compaction replaces it,
    /// and deleting the realm's files removes it.
    @Test func aStrayCopyOfAStoppedCompactionIsReplacedAndDeletedWithTheRealm() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        try Self.fill(configuration)
        let stray = configuration.path + ".compacting"
        try Data(repeating: 0xAB, count: 4096).write(to: URL(fileURLWithPath: stray))
        #expect(try Realm.compact(configuration: configuration))
        #expect(!FileManager.default.fileExists(atPath: stray))
        try Data(repeating: 0xAB, count: 4096).write(to: URL(fileURLWithPath: stray))
        #expect(try Realm.deleteFiles(for: configuration))
        #expect(!FileManager.default.fileExists(atPath: stray))
    }

    /// This process holds the realm open; a child process asks to compact it and must be
    /// refused. (The child waits for nothing: an exit test's parent blocks a thread of the
    /// cooperative pool until its child ends, so a child that waited for its parent could
    /// starve the pool on a 2-core machine when another suite does the same.)
    @Test func compactRefusesWhileAnotherProcessHasTheFile() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        try Self.fill(configuration)
        let path = configuration.path
        let before = try Data(contentsOf: configuration.fileURL!)
        do {
            let realm = try Realm(configuration: configuration)
            await #expect(processExitsWith: .success) { [path = path as String] in
                let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Person.self])
                guard try !Realm.compact(configuration: configuration) else { exit(3) }
            }
            #expect(realm.objects(Person.self).count == 100)
        }
        #expect(try Data(contentsOf: configuration.fileURL!) == before)
        #expect(try Realm.compact(configuration: configuration))
    }

    /// Children compact in a loop (each round grows the file and frees most of it again, so
    /// that every compaction rewrites it) until they SIGKILL themselves, at a different moment
    /// after their first compaction each round. Whenever the kill comes, the file opens whole
    /// with the 100 objects that never change, and compacts again.
    @Test func compactionsKilledAtAnyInstantLeaveTheOldOrTheNewFile() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        try Self.fill(configuration, count: 100)
        let path = configuration.path
        let log = folder.url.appendingPathComponent("compactions.log").path
        let rounds = 6
        for round in 0..<rounds {
            let delay = UInt32(5_000 + 40_000 * round)
            await #expect(processExitsWith: .signal(SIGKILL), "round \(round)") { [path = path as String, log = log as String, delay = delay as UInt32] in
                let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Person.self])
                if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
                let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
                try handle.seekToEnd()
                let firstCompaction = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    firstCompaction.wait()
                    usleep(delay)
                    kill(getpid(), SIGKILL)
                }
                while true {
                    do {
                        let realm = try Realm(configuration: configuration)
                        try realm.write {
                            for i in 1_000..<1_300 { realm.create(Person.self, value: ["id": i, "name": "filler"], update: .modified) }
                        }
                        try realm.write { realm.delete(realm.objects(Person.self).filter("id >= 1000")) }
                    }
                    guard try Realm.compact(configuration: configuration) else { exit(4) }
                    handle.write(Data("compacted\n".utf8))
                    firstCompaction.signal()
                }
            }
            let realm = try Realm(configuration: configuration)
            let kept = realm.objects(Person.self).filter("id < 1000")
            #expect(Array(kept.sorted(byKeyPath: "id").map(\.id)) == Array(0..<100), "round \(round)")
            #expect(kept.allSatisfy { $0.name.count == 40 }, "round \(round)")
            try RoundTripTests.verify(configuration)
        }
        let compactions = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
        #expect(compactions >= rounds, "every child must have compacted (\(compactions) compactions logged)")
        #expect(try Realm.compact(configuration: configuration))
        try RoundTripTests.verify(configuration)
    }
}
