import Dispatch
import RealmStorage

// Async writes: the Swift concurrency face of the write lane.
//
// A `Realm` is not `Sendable`: it belongs to the thread or actor that opened it. The async
// methods here take the caller's isolation (`isolation: isolated (any Actor)? = #isolation`),
// so they run on that actor and the realm never crosses to another one. What may block runs
// elsewhere: waiting for the lane suspends the task (WriteLane.swift), the file is grown and
// written on the store's write queue and synced on its sync queue (Store+GroupCommit.swift), and
// the task resumes once its commit is durable. Commits from many tasks that queue up together
// share one sync.

extension Realm {
    /// Opens a realm for the calling actor. The file is opened (and recovered, if it must be),
    /// and a changed schema version recorded or migrated, on a dispatch queue, not on the
    /// task's thread.
    ///
    /// ```swift
    /// actor Ledger {
    ///     func record(_ entry: Entry) async throws {
    ///         let realm = try await Realm.open(configuration: config)
    ///         try await realm.asyncWrite { realm.add(entry) }
    ///     }
    /// }
    /// ```
    public static func open(configuration: Configuration = .defaultConfiguration,
                            isolation: isolated (any Actor)? = #isolation) async throws -> Realm {
        // Opening the store is the blocking part; the Realm below finds it already open.
        let store: Store? = try await Realm.openStoreOffThread(configuration)
        let realm = try Realm(configuration: configuration)
        withExtendedLifetime(store) {}
        return realm
    }

    /// Opens a realm isolated to `actor` (the seeds' `Realm(actor:)`): call it from the actor.
    public convenience init(configuration: Configuration = .defaultConfiguration, actor: isolated any Actor) async throws {
        let store: Store? = try await Realm.openStoreOffThread(configuration)
        try self.init(configuration: configuration)
        withExtendedLifetime(store) {}
    }

    /// Does the blocking part of opening on a dispatch queue, not on the task's thread: opens
    /// the file (recovering it if it must), checks the schema, and makes the one write that
    /// records a new schema version or index change. The realm opened there is used only
    /// there; the caller's realm then finds the file open and up to date.
    ///
    /// With a migration block, only the file is opened there: the block is the caller's, and
    /// may touch its actor's state, so it runs on the caller. With a compaction test, nothing
    /// is (the file must not be open when the caller's realm compacts it).
    private static func openStoreOffThread(_ configuration: Configuration) async throws -> Store? {
        // A key is checked there as on the caller (its length, then the file's header, before
        // anything is read), and its errors are thrown to the caller as they would be there.
        guard configuration.shouldCompactOnLaunch == nil else { return nil }
        let callerClosures = configuration.migrationBlock != nil
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Store?, Swift.Error>) in
            DispatchQueue.global().async {
                do {
                    if callerClosures {
                        let store = try engine { () throws(StorageError) in
                            try Store.open(path: configuration.path, options: configuration.storeOptions)
                        }
                        continuation.resume(returning: store)
                        return
                    }
                    let realm = try Realm(configuration: configuration, isolation: nil)
                    continuation.resume(returning: realm.store)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Runs `block` in a write transaction and commits it, suspending (never blocking a
    /// thread) while it waits for the write lane and for the commit to be durable.
    ///
    /// If `block` throws, or the task is cancelled by the time `block` returns, the
    /// transaction is rolled back and the error (or `CancellationError`) is thrown. A task
    /// cancelled while it waits for the lane leaves the line without writing.
    ///
    /// - Throws: `CancellationError`, `Realm.Error` (the first data error `block` met, as
    ///   `commitWrite` says; `alreadyInWriteTransaction`, `readOnly`,
    ///   the commit's I/O errors), or what `block` throws.
    @discardableResult
    public func asyncWrite<Result>(_ block: () throws -> Result,
                                   isolation: isolated (any Actor)? = #isolation) async throws -> Result {
        try await beginWriteAsync()
        let result: Result
        do {
            result = try block()
            try Task.checkCancellation()
        } catch {
            cancelWrite()
            throw error
        }
        if isInWriteTransaction { try await commitWriteAsync(allowGrouping: true) }
        return result
    }

    /// Begins a write transaction, suspending until the write lane is free.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits.
    public func beginWriteAsync(isolation: isolated (any Actor)? = #isolation) async throws {
        verifyUsableAcrossSuspension(isolation, "beginWriteAsync")
        try checkCanBeginWrite()
        try deliverBeforeWriting()
        let transaction: WriteTransaction
        do throws(StorageError) {
            transaction = try await store.beginWriteAsync()
        } catch where error.code == .cancelled {
            throw CancellationError()
        } catch {
            throw Realm.Error(error)
        }
        // Another write may have begun on this realm while this one waited for the lane.
        guard writeTransaction == nil else {
            transaction.rollback()
            throw Realm.Error(.alreadyInWriteTransaction, "a write transaction is already open on this realm", path: configuration.path)
        }
        didBegin(transaction)
        try afterBegin()
    }

    /// Commits the open write transaction, suspending until it is durable. With `allowGrouping`
    /// (the default) it may share its sync with the commits queued behind it; without, it keeps
    /// the write lane until its own sync is done.
    public func commitWriteAsync(allowGrouping: Bool = true, isolation: isolated (any Actor)? = #isolation) async throws {
        verifyUsableAcrossSuspension(isolation, "commitWriteAsync")
        let ending = try endWrite()
        let committed: VersionID
        do throws(StorageError) {
            committed = try await ending.transaction.commitAsync(groupable: allowGrouping)
        } catch {
            commitFailed(ending, Realm.Error(error))
            throw Realm.Error(error)
        }
        didCommit(committed)
    }
}

extension Realm {
    /// Traps unless the caller may use the realm after a suspension: on the realm's actor (or
    /// on the main actor, for a realm of the main thread), or in the task it belongs to, which
    /// stays its owner wherever it resumes. A realm of a thread outside any task cannot get
    /// here, and one confined to a dispatch queue has `writeAsync` instead. `needsContext`:
    /// the operation is resumed through the realm's context (RealmContext.swift), which a realm
    /// of a task does not have (nothing can post to a task).
    func verifyUsableAcrossSuspension(_ isolation: (any Actor)?, _ operation: String, needsContext: Bool = false) {
        confinement.verify()
        switch confinement {
        case .actor(let reference) where reference.actor === isolation: return
        case .thread(_, mainActor: true) where isolation is MainActor: return
        case .task where !needsContext: return
        case .none: return
        case .task:
            misuse("\(operation) needs a realm opened on an actor: changes are delivered through the realm's actor, and a realm "
                   + "opened in a task outside any actor has none. Open the realm in an actor (Realm.open, Realm(configuration:)), "
                   + "or use RealmActor")
        default:
            misuse("\(operation) needs a realm opened on the calling actor (or in the calling task): a realm opened outside any "
                   + "actor and task belongs to its thread, which an async call may not resume on. Open the realm in an actor "
                   + "(Realm.open, Realm(configuration:)), "
                   + "use RealmActor, or write with write { } (on a dispatch queue, writeAsync)")
        }
    }
}
