import Foundation
import Logging
import OpenRealm
import OpenRealmServer
import ServiceLifecycle
import Synchronization
import Testing

/// `RealmService` in a `ServiceGroup`: it opens the realm at start, and graceful shutdown
/// waits for the writes in flight, then closes the realm.
@Suite struct RealmServiceTests {
    @Test func gracefulShutdownFinishesTheWriteInFlightAndItIsDurable() async throws {
        let folder = ServerTestFolder()
        let lines = LogLines()
        let service = RealmService(configuration: folder.configuration(logging: lines))
        let group = ServiceGroup(services: [service], logger: Logging.Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let stopped = Atomic<Bool>(false)
        let running = Task {
            try await group.run()
            stopped.store(true, ordering: .sequentiallyConsistent)
        }

        let started = Atomic<Bool>(false)
        let gate = DispatchSemaphore(value: 0)
        let write = Task {
            try await service.write { realm in
                started.store(true, ordering: .sequentiallyConsistent)
                // The actor runs on its own queue: blocking here holds no pool thread.
                gate.wait()
                realm.add(ServerEntry(value: ["id": 7, "text": "in flight"]))
            }
        }
        while !started.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(1)) }
        await group.triggerGracefulShutdown()
        try await Task.sleep(for: .milliseconds(50))
        // Shutdown waits for the write in flight.
        let stoppedEarly = stopped.load(ordering: .sequentiallyConsistent)
        #expect(!stoppedEarly)
        gate.signal()
        try await write.value
        try await running.value
        // Once shut down, the service takes no more writes.
        await #expect(throws: Realm.Error.self) { try await service.write { $0.add(ServerEntry(value: ["id": 8])) } }

        let reopened = try Realm(configuration: folder.configuration())
        #expect(reopened.objects(ServerEntry.self).map(\.id) == [7])
        #expect(lines.messages(.info, containing: "Opened \(folder.path)").count >= 1)
        try folder.verify()
    }

    @Test func aFileThatCannotBeOpenedFailsTheServiceAtStart() async throws {
        let folder = ServerTestFolder()
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: folder.path))
        let service = RealmService(configuration: folder.configuration())
        let group = ServiceGroup(services: [service], logger: Logging.Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        await #expect(throws: (any Error).self) { try await group.run() }
    }
}
