import Logging
import OpenRealm
import RealmStorage
import ServiceLifecycle

/// A swift-service-lifecycle `Service` that owns a realm through a `RealmActor`: it opens the
/// realm when the service group starts it, and on graceful shutdown refuses new writes, waits
/// for the writes in flight to be durable, and closes the realm.
///
/// ```swift
/// let realm = RealmService(configuration: config, logger: logger)
/// let group = ServiceGroup(services: [realm, http], gracefulShutdownSignals: [.sigterm], logger: logger)
/// // in a route handler:
/// let id = try await realm.write { realm in
///     let todo = Todo(value: ["title": title])
///     realm.add(todo)
///     return todo.id
/// }
/// try await group.run()
/// ```
///
/// Write through the service (`write`) for its shutdown to wait for the write; reads and
/// writes may also go to `actor` directly. Put it before the services that use it in the
/// group's list: the group shuts services down in reverse order, so they stop first.
public final class RealmService: Service {
    /// The actor that owns the realm.
    public let actor: RealmActor
    private let writes = WritesInFlight()

    /// A service for the realm `configuration` opens. With `logger`, and no logger in the
    /// configuration, the realm logs to it (`OpenRealm.Logger(_:)`).
    public init(configuration: Realm.Configuration, logger: Logging.Logger? = nil) {
        var configuration = configuration
        if configuration.logger == nil, let logger { configuration.logger = OpenRealm.Logger(logger) }
        actor = RealmActor(configuration: configuration)
    }

    /// A service for a realm an actor already owns.
    public init(actor: RealmActor) {
        self.actor = actor
    }

    /// Runs `block` in a write transaction on the actor's realm, as `RealmActor.write`;
    /// graceful shutdown waits for it.
    ///
    /// - Throws: `Realm.Error` `cancelled` once shutdown has begun (nothing is written), and
    ///   what `RealmActor.write` throws.
    @discardableResult
    public func write<Result: Sendable>(_ block: @Sendable (Realm) throws -> Result) async throws -> Result {
        guard writes.enter() else {
            throw Realm.Error(.cancelled, "the realm service is shutting down and takes no more writes", path: actor.configuration.fileURL?.path ?? actor.configuration.inMemoryIdentifier)
        }
        defer { writes.leave() }
        return try await actor.write(block)
    }

    /// Runs `block` on the actor's realm at the newest version (`RealmActor.read`).
    public func read<Result: Sendable>(_ block: @Sendable (Realm) throws -> Result) async throws -> Result {
        try await actor.read(block)
    }

    /// Opens the realm (a file that cannot be opened fails the service at once), then waits
    /// for graceful shutdown or cancellation; then refuses new writes, waits for those in
    /// flight and closes the realm.
    public func run() async throws {
        try await actor.read { _ in }
        try? await gracefulShutdown()
        await writes.drain()
        await actor.close()
    }
}

/// Counts the writes in flight and lets `drain` wait for them.
private final class WritesInFlight: Sendable {
    private struct State {
        var count = 0
        var closed = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    /// Counts a write in; false once draining began.
    func enter() -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.count += 1
            return true
        }
    }

    func leave() {
        let waiting: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.count -= 1
            guard state.count == 0 else { return [] }
            defer { state.drained = [] }
            return state.drained
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Refuses new writes and returns once none is in flight.
    func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                state.closed = true
                guard state.count > 0 else { return true }
                state.drained.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
