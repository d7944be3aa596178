import Dispatch
import RealmStorage

// The seeds' async write family: `writeAsync`, `beginAsyncWrite`, `commitAsyncWrite`,
// `cancelAsyncWrite`, `isPerformingAsynchronousWriteOperations`.
//
// Callbacks run in the realm's context — its actor, or its dispatch queue — so these need a
// realm opened on an actor or with `Realm(configuration:queue:)` (RealmContext.swift). Async
// writes of one realm run one after another, in the order they were asked for. Waiting for
// the write lane suspends a task, never the context; the block then runs in the context, and
// the commit is written and synced on the store's queues. `commitAsyncWrite` returns at once,
// and the realm's next async write may begin while the commit is still being synced: with
// `allowGrouping`, commits queued together share one sync (Store+GroupCommit.swift).

/// Identifies an async write (`beginAsyncWrite`, `writeAsync`) or an async commit
/// (`commitAsyncWrite`), for `cancelAsyncWrite`.
public typealias AsyncTransactionId = UInt32

/// A realm's async writes. Touched only in the realm's context.
struct AsyncWriteState {
    var lastId: AsyncTransactionId = 0
    /// Writes waiting for their turn, oldest first.
    var queued: [(id: AsyncTransactionId, block: () -> Void)] = []
    /// Whether the write lane is being asked for, for the first queued write.
    var requesting = false
    /// The async write whose transaction is open (its block is running).
    var current: AsyncTransactionId?
    /// Commits not yet answered, and whether their callback is still wanted.
    var committing: [AsyncTransactionId: Bool] = [:]

    var isBusy: Bool { !queued.isEmpty || requesting || current != nil || !committing.isEmpty }

    mutating func nextId() -> AsyncTransactionId {
        lastId &+= 1
        return lastId
    }
}

extension Realm {
    /// Whether async writes or commits of this realm are queued or under way.
    public var isPerformingAsynchronousWriteOperations: Bool { asyncWrites.isBusy }

    /// Runs `block` in a write transaction once the realm's turn comes, and commits it
    /// asynchronously; `onComplete` runs in the realm's context once the commit is durable
    /// (nil) or failed (the error). The block may commit or cancel itself
    /// (`commitAsyncWrite`, `cancelWrite`); if it does neither, the write is committed.
    ///
    /// ```swift
    /// queue.async {
    ///     let realm = try! Realm(configuration: config, queue: queue)
    ///     realm.writeAsync {
    ///         realm.add(Dog(value: ["name": "Rex"]))
    ///     } onComplete: { error in
    ///         if let error { print("not saved: \(error)") }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        confinement.verify()
        requireContext("writeAsync")
        return beginAsyncWrite {
            block()
            if self.asyncWrites.current != nil && self.isInWriteTransaction {
                self.commitAsyncWrite(onComplete)
            } else {
                // The block committed or cancelled by itself: the operation is complete.
                onComplete?(nil)
            }
        }
    }

    /// Queues a write transaction: `asyncWriteBlock` runs in it, in the realm's context, once
    /// the writes queued before it are done and the write lane is free. The block must end the
    /// transaction with `commitAsyncWrite` (or `commitWrite`); one still open when the block
    /// returns is cancelled. Returns an ID for `cancelAsyncWrite`.
    @discardableResult
    public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        confinement.verify()
        requireContext("beginAsyncWrite")
        ensure(!isFrozen, "Cannot write to a frozen realm: it is a read-only snapshot; write through a live realm (thaw())")
        ensure(!configuration.readOnly, "Cannot write to a realm opened read-only")
        let id = asyncWrites.nextId()
        asyncWrites.queued.append((id, asyncWriteBlock))
        startNextAsyncWrite()
        return id
    }

    /// Commits the open write transaction without waiting: the commit is written and synced on
    /// the store's queues, and `onComplete` runs in the realm's context once it is durable (nil)
    /// or failed. With `allowGrouping`, commits made one after another may share one sync.
    /// Returns an ID for `cancelAsyncWrite` (which then cancels only the callback).
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        confinement.verify()
        let context = requireContext("commitAsyncWrite")
        let id = asyncWrites.current ?? asyncWrites.nextId()
        if isInWriteTransaction, let failure = takeWriteFailure() {
            // A data error of the write (Realm+WriteFailure.swift): nothing of it is kept, and
            // the callback is told as it would be of a failed commit.
            cancelWrite()
            let callback = InContext(onComplete)
            context.post { callback.value?(failure) }
            startNextAsyncWrite()
            return id
        }
        let ending: EndingWrite
        do { ending = try endWrite() } catch {
            misuse("Cannot commitAsyncWrite: no write transaction is open on this realm (begin one with beginAsyncWrite or beginWrite)")
        }
        asyncWrites.committing[id] = true
        let realm = InContext(self), ended = InContext(ending), callback = InContext(onComplete)
        do throws(StorageError) {
            try ending.transaction.commit(groupable: allowGrouping) { result in
                context.post { realm.value.asyncCommitAnswered(id, ended.value, result, callback.value) }
            }
        } catch {
            context.post { realm.value.asyncCommitAnswered(id, ended.value, .failure(error), callback.value) }
        }
        startNextAsyncWrite()
        return id
    }

    /// Cancels an async write or an async commit's callback. For an ID from `beginAsyncWrite`
    /// or `writeAsync`: a queued write never runs, an open one is rolled back. For an ID from
    /// `commitAsyncWrite`: the commit goes on, its `onComplete` is not called. An ID that is
    /// done already is ignored.
    ///
    /// - Throws: `Realm.Error` (`invalidArgument`) for an ID this realm never gave.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        confinement.verify()
        let id = asyncTransactionId
        guard id != 0, id <= asyncWrites.lastId else {
            throw Realm.Error(.invalidArgument, "no async write has the ID \(id) in this realm", path: configuration.path)
        }
        if let index = asyncWrites.queued.firstIndex(where: { $0.id == id }) {
            asyncWrites.queued.remove(at: index)
        } else if asyncWrites.current == id {
            cancelWrite()
        } else if asyncWrites.committing[id] != nil {
            asyncWrites.committing[id] = false
        }
    }

    @discardableResult
    private func requireContext(_ operation: String) -> RealmContext {
        guard let context else {
            misuse("\(operation) needs a realm whose callbacks have somewhere to run: open it on an actor (Realm.open, "
                   + "Realm(configuration:actor:)) or on a dispatch queue (Realm(configuration:queue:)); on a thread, use write { }")
        }
        return context
    }

    /// Asks for the write lane for the first queued write, unless a write is open or asked for.
    ///
    /// A realm with observers first delivers what changed, so that they run before the write
    /// holds the lane (`deliverBeforeWriting`); posted, so that no block is called from inside
    /// `writeAsync` or `commitAsyncWrite`.
    private func startNextAsyncWrite() {
        guard !asyncWrites.requesting, asyncWrites.current == nil, writeTransaction == nil,
              !asyncWrites.queued.isEmpty, let context else { return }
        asyncWrites.requesting = true
        let store = self.store, realm = InContext(self)
        func requestLane() {
            Task {
                let granted: Result<InContext<WriteTransaction>, StorageError>
                do throws(StorageError) {
                    granted = .success(InContext(try await store.beginWriteAsync()))
                } catch {
                    granted = .failure(error)
                }
                context.post { realm.value.asyncWriteGranted(granted.map(\.value)) }
            }
        }
        guard notifier?.hasObservers == true else {
            requestLane()
            return
        }
        context.post {
            // An observer that left a write open keeps it: the granted write then steps back.
            try? realm.value.deliverBeforeWriting()
            requestLane()
        }
    }

    /// In the realm's context, with the lane: runs the first queued write's block.
    private func asyncWriteGranted(_ granted: Result<WriteTransaction, StorageError>) {
        asyncWrites.requesting = false
        guard case .success(let transaction) = granted else {
            // The lane could not be had (the file failed): the write cannot run.
            if !asyncWrites.queued.isEmpty { asyncWrites.queued.removeFirst() }
            startNextAsyncWrite()
            return
        }
        // Cancelled while waiting, or a synchronous write took the realm meanwhile.
        guard !asyncWrites.queued.isEmpty, writeTransaction == nil else {
            transaction.rollback()
            startNextAsyncWrite()
            return
        }
        let (id, block) = asyncWrites.queued.removeFirst()
        didBegin(transaction)
        do {
            try afterBegin()
        } catch {
            startNextAsyncWrite()
            return
        }
        asyncWrites.current = id
        block()
        // Neither committed nor cancelled: an async write left open is cancelled.
        if asyncWrites.current == id { cancelWrite() }
        startNextAsyncWrite()
    }

    /// In the realm's context: an async commit is durable or failed.
    private func asyncCommitAnswered(_ id: AsyncTransactionId, _ ending: EndingWrite,
                                     _ result: Result<VersionID, StorageError>, _ onComplete: ((Swift.Error?) -> Void)?) {
        let wanted = asyncWrites.committing.removeValue(forKey: id) ?? false
        let error: Swift.Error?
        switch result {
        case .success(let committed):
            didCommit(committed)
            error = nil
        case .failure(let failure):
            let failure = Realm.Error(failure)
            commitFailed(ending, failure)
            error = failure
        }
        if wanted { onComplete?(error) }
    }
}

extension Realm {
    /// Opens a realm confined to `queue`: it and its objects may be used in any block running
    /// on that (serial) queue, whichever thread runs it, and async write callbacks and
    /// autorefresh run there. Call it from a block running on `queue`. A nil `queue` opens the
    /// realm as `Realm(configuration:)` does: confined to the calling actor, or thread.
    ///
    /// ```swift
    /// queue.async {
    ///     let realm = try! Realm(configuration: config, queue: queue)
    ///     realm.writeAsync { realm.add(Dog()) }
    /// }
    /// ```
    ///
    /// - Throws: as `Realm(configuration:)`.
    public convenience init(configuration: Configuration = .defaultConfiguration, queue: DispatchQueue? = nil,
                            isolation: isolated (any Actor)? = #isolation) throws {
        guard let queue else {
            try self.init(configuration: configuration, confinement: .of(isolation))
            return
        }
        try self.init(configuration: configuration, confinement: .queue(QueueReference(queue)))
    }
}
