import Dispatch

/// An actor that owns a realm, for code that does not want an actor of its own: hand it
/// closures to read and write, from any task.
///
/// ```swift
/// let store = RealmActor(configuration: config)
/// let id = try await store.write { realm in
///     let order = Order(value: ["total": 42])
///     realm.add(order)
///     return order.id
/// }
/// ```
///
/// The actor runs on its own serial queue, not on the cooperative thread pool, so a closure
/// that blocks (a large synchronous write, a migration at first use) holds no pool thread.
/// Its writes queue on the file's write lane with every other writer and share syncs with
/// them (group commit). Results leave the actor, so they must be `Sendable`: return plain
/// values, frozen objects or thread-safe references, never live objects.
public actor RealmActor {
    public nonisolated let configuration: Realm.Configuration
    private let executor: QueueExecutor
    private var openedRealm: Realm?

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    public init(configuration: Realm.Configuration = .defaultConfiguration) {
        self.configuration = configuration
        executor = QueueExecutor(label: "openrealm.actor." + configuration.path)
    }

    /// The actor's realm, opened on first use and kept; moved to the newest version when it is
    /// read through `read` or a write begins.
    public func realm() throws -> Realm {
        if let openedRealm { return openedRealm }
        let realm = try Realm(configuration: configuration)
        openedRealm = realm
        return realm
    }

    /// Runs `block` in a write transaction on the actor's realm and returns its result once
    /// the commit is durable. Rolls back if `block` throws or the task is cancelled first.
    @discardableResult
    public func write<Result: Sendable>(_ block: @Sendable (Realm) throws -> Result) async throws -> Result {
        let realm = try realm()
        // The actor's queue may block: the commit's nodes are written here.
        return try await realm.asyncWrite({ try block(realm) }, writeHere: true)
    }

    /// Runs `block` on the actor's realm at the newest version.
    public func read<Result: Sendable>(_ block: @Sendable (Realm) throws -> Result) throws -> Result {
        let realm = try realm()
        if !realm.isInWriteTransaction { realm.refresh() }
        return try block(realm)
    }

    /// Releases the realm (and the version it reads); the next use opens it again.
    public func close() {
        openedRealm?.invalidate()
        openedRealm = nil
    }
}

/// A serial executor on a dispatch queue of its own: jobs run one at a time, off the
/// cooperative pool.
final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}
