import Dispatch
import Synchronization

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
/// Writes queued on the actor together run in one transaction and one commit (each block
/// still sees those before it, and one that throws is undone alone: WriteBatch.swift); that
/// commit queues on the file's write lane with every other writer and shares syncs with them
/// (group commit). Results leave the actor, so they must be `Sendable`: return plain values,
/// frozen objects or thread-safe references, never live objects.
public actor RealmActor {
    /// The configuration the actor's realm is opened with.
    public nonisolated let configuration: Realm.Configuration
    private let executor: QueueExecutor
    /// The realm `read` and `realm()` give: never inside a merged write's transaction.
    private var openedRealm: Realm?
    /// The realm writes run in (WriteBatch.swift).
    var writer: Realm?
    /// The merged write being gathered, if any (WriteBatch.swift).
    var batch: WriteBatch?
    /// Set by `close()` during a merged write: the writer goes once it is committed.
    var closeRequested = false
    /// Commits written whose outcome the writer realm has not been told yet (WriteBatch.swift).
    var inFlight: [InFlightCommit] = []
    /// The writes handed to the actor and not yet taken into a batch (WriteBatch.swift).
    nonisolated let intake = WriteIntake()

    /// The actor's own serial executor, on a dispatch queue of its own (off the cooperative pool).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// An actor for the realm of `configuration`. Nothing is opened until the first use, so
    /// creating it cannot fail: errors of the file come from the first `write`, `read` or
    /// `realm()`.
    ///
    /// ```swift
    /// let store = RealmActor(configuration: Realm.Configuration(fileURL: url))
    /// ```
    public init(configuration: Realm.Configuration = .defaultConfiguration) {
        self.configuration = configuration
        executor = QueueExecutor(label: "openrealm.actor." + configuration.path)
    }

    /// The actor's realm for reading, opened on first use and kept; moved to the newest
    /// version when it is read through `read`. Write through `write`: a synchronous write on
    /// this realm would wait for the write lane on the actor's own queue, where the writes
    /// queued before it need to run.
    ///
    /// For code isolated to the actor, such as a loop over a collection's changes:
    ///
    /// ```swift
    /// func feed(_ store: isolated RealmActor) async throws {
    ///     for await change in try store.realm().objects(Todo.self).changes { print(change) }
    /// }
    /// ```
    ///
    /// - Throws: what opening the realm throws (`Realm.Error`).
    public func realm() throws -> Realm {
        settleCommits()
        if let openedRealm { return openedRealm }
        let realm = try Realm(configuration: configuration)
        openedRealm = realm
        return realm
    }

    /// Runs `block` in a write transaction on the actor's realm and returns its result once
    /// the commit is durable. Rolls back if `block` throws or the task is cancelled first.
    ///
    /// Writes queued on the actor together are merged into one transaction and one commit
    /// (each block still sees the writes queued before it; one that throws is undone alone).
    /// Every caller is answered once the commit is durable, or with its error; if the commit
    /// fails, every write merged into it fails and none is visible.
    ///
    /// The caller does not go to the actor: it hands `block` in and waits, and the actor runs
    /// the blocks handed in together in a task of its own. So `block` runs isolated to the
    /// actor but not in the caller's task: the caller's task-local values are not visible in
    /// it, and `Task.isCancelled` there says whether the caller was cancelled while the block
    /// ran (it is then undone, as when the caller was cancelled before its turn).
    ///
    /// - Throws: what `block` throws, `CancellationError`, the commit's `Realm.Error`, or the
    ///   first data error `block`'s adds, creates and setters met (`duplicatePrimaryKey`,
    ///   `valueTooLarge`, `invalidArgument`): that block alone is undone.
    ///
    /// ```swift
    /// let created = try await store.write { realm in
    ///     realm.create(Todo.self, value: ["id": 7, "title": "Ship it"]).id
    /// }
    /// ```
    @discardableResult
    public nonisolated func write<Result: Sendable>(_ block: @Sendable (Realm) throws -> Result) async throws -> Result {
        // The block is handed to the actor's drain, which runs it before this call returns
        // (WriteBatch.swift): it never outlives the call.
        try await withoutActuallyEscaping(block) { block in
            let result = WriteResult<Result>()
            let request = WriteRequest { realm in result.value = try block(realm) }
            if intake.append(request) { intake.setDrain(Task { await self.drain() }) }
            try await withTaskCancellationHandler {
                try await request.wait()
            } onCancel: {
                request.cancel()
            }
            return result.value!
        }
    }

    /// Runs `block` on the actor's realm at the newest version and returns its result.
    ///
    /// ```swift
    /// let open = try await store.read { realm in realm.objects(Todo.self).where { !$0.done }.count }
    /// let snapshot = try await store.read { realm in Frozen(realm) }   // for reads off the actor
    /// ```
    ///
    /// Reads run on the actor, behind the writes queued before them.
    ///
    /// - Throws: what `block` throws, and what opening the realm throws.
    public func read<Result: Sendable>(_ block: @Sendable (Realm) throws -> Result) throws -> Result {
        let realm = try realm()
        if !realm.isInWriteTransaction { realm.refresh() }
        return try block(realm)
    }

    /// Releases the realm (and the version it reads); the next use opens it again. A merged
    /// write in progress still commits.
    ///
    /// ```swift
    /// await store.close()
    /// let compacted = try Realm.compact(configuration: store.configuration)
    /// ```
    public func close() {
        settleCommits()
        openedRealm?.invalidate()
        openedRealm = nil
        if batch == nil {
            writer?.invalidate()
            writer = nil
        } else {
            closeRequested = true
        }
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
