import Dispatch
import RealmStorage

extension Realm {
    /// What a realm notification block is told.
    ///
    /// ```swift
    /// let token = realm.observe { notification, realm in
    ///     if notification == .didChange { reloadViews(from: realm) }
    /// }
    /// ```
    @frozen public enum Notification: String, Sendable {
        /// The realm moved to a newer version: this realm committed a write, or it refreshed
        /// (by itself, or at the start of a write) to commits made elsewhere.
        case didChange = "RLMRealmDidChangeNotification"
        /// A newer version exists, but the realm stays where it is because its `autorefresh`
        /// is off: call `refresh()` to move. Sent to realms on an actor or a dispatch queue
        /// (which hear of new versions); a realm on a thread hears of them when it refreshes.
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }

    /// A realm notification block: the notification and the realm it is about.
    public typealias NotificationBlock = (_ notification: Notification, _ realm: Realm) -> Void

    /// Registers `block` to be called each time the realm moves to a newer version.
    ///
    /// After a commit of this realm the block is called before `commitWrite` (or `write`)
    /// returns. Commits made elsewhere (another realm, thread, actor or task of this process)
    /// reach the realm when it moves to their version, and the block is called then: at
    /// `refresh()`, at the start of a write, or — for a realm on an actor or a dispatch queue
    /// with `autorefresh` on — soon after the commit, on that actor or queue. A realm on a
    /// plain thread has no event loop on Linux: it hears of other commits only when it
    /// refreshes or writes. Several commits may be reported as one.
    ///
    /// ```swift
    /// let token = realm.observe { notification, realm in
    ///     print("the realm changed:", notification)
    /// }
    /// ```
    ///
    /// Keep the token as long as the block should be called; invalidate it (or let it go) to
    /// stop. Blocks may be added inside a write transaction.
    ///
    /// Traps (as Realm raises) on a frozen or read-only realm: they never change.
    public func observe(_ block: @escaping NotificationBlock) -> NotificationToken {
        verifyCanObserve(inWriteToo: true)
        let observation = RealmObservation(block)
        notifierForObserving().add(observation)
        return NotificationToken(observation)
    }

    /// Checks Realm's rules for adding an observer: on the realm's thread or actor (the
    /// confinement rule), not frozen, not read-only, and (for collections and objects) not
    /// inside a write transaction.
    func verifyCanObserve(inWriteToo: Bool = false) {
        confinement.verify()
        ensure(!isFrozen, "Frozen Realms do not change and do not have change notifications.")
        ensure(!configuration.readOnly, "Read-only Realms do not change and do not have change notifications.")
        ensure(inWriteToo || writeTransaction == nil, "Cannot register notification blocks from within write transactions.")
    }

    /// The notifier, made when the first observer comes.
    func notifierForObserving() -> RealmNotifier {
        if let notifier { return notifier }
        let made = RealmNotifier(realm: self)
        notifier = made
        return made
    }

    /// Registers a collection or object observation calling `block`.
    func register<Subject: ObservedSubject>(_ subject: Subject, _ block: @escaping (Subject.Change) -> Void) -> NotificationToken {
        let observation = CallbackObservation(subject, block)
        let notifier = notifierForObserving()
        if !subject.deliversInitial { observation.startWithoutInitial(at: notifier.pinForCurrentVersion()) }
        notifier.add(observation)
        return NotificationToken(observation)
    }
}

// MARK: - Observing from another context

// Observing from another context: `observe(on: queue)` and `observe(on: actor)`.
//
// A live collection or object belongs to its realm's thread or actor, so it cannot be handed
// to a block running elsewhere. As in Realm, the value travels as a `ThreadSafeReference`; a
// realm of the same file is opened in the target context (confined to that queue or actor, so
// that it refreshes there by itself), the reference is resolved in it, and the value found
// there is observed there. The block receives values of that realm. The token returned at
// once stands for the registration made later; invalidating it ends both.

/// How a value of this realm is observed in the realm opened elsewhere: the value resolved
/// there, the key paths, and the block to call there.
typealias Registration<Value, Change> = @Sendable (Value, [String]?, @escaping (Change) -> Void) -> NotificationToken

/// Opens a realm of `value`'s file on `queue`, resolves `value` in it and registers `register`
/// for it there; a realm that cannot be opened is reported to `block` as an error.
func observe<Value: ThreadConfined & SendableMetatype, Change: _FailableChange>(
    _ value: Value, of realm: Realm, keyPaths: [String]?, on queue: DispatchQueue,
    _ block: @escaping @Sendable (Change) -> Void, _ register: @escaping Registration<Value, Change>
) -> NotificationToken {
    let reference = ThreadSafeReference(to: value)
    let configuration = realm.configuration
    let deferred = DeferredObservation()
    queue.async {
        guard deferred.isActive else { return }
        do {
            let realm = try Realm(configuration: configuration, queue: queue)
            // Deleted meanwhile: nothing to observe.
            guard let value = realm.resolve(reference) else { return }
            deferred.attach(register(value, keyPaths, block))
        } catch {
            block(._failed(error))
        }
    }
    return NotificationToken(deferred)
}

/// Opens a realm of `value`'s file on `actor`, resolves `value` in it and registers `register`
/// for it there, calling `block` isolated to `actor`; returns once registered.
func observe<Value: ThreadConfined & SendableMetatype, Change: _FailableChange, A: Actor>(
    _ value: Value, of realm: Realm, keyPaths: [String]?, on actor: A, isolation: isolated (any Actor)?,
    _ block: @escaping @Sendable (isolated A, Change) -> Void, _ register: @escaping Registration<Value, Change>
) async -> NotificationToken {
    // In the caller's isolation (where `value` lives) until the reference is made.
    let reference = ThreadSafeReference(to: value)
    let configuration = realm.configuration
    return await registering(on: actor) { actor in
        do {
            // Opened here, the realm is confined to `actor` (its `#isolation`).
            let realm = try Realm(configuration: configuration)
            guard let value = realm.resolve(reference) else { return NotificationToken(DeferredObservation()) }
            // The block runs where the realm delivers: on `actor`.
            return register(value, keyPaths) { change in block(actor, change) }
        } catch {
            block(actor, ._failed(error))
            return NotificationToken(DeferredObservation())
        }
    }
}

private func registering<A: Actor>(on actor: isolated A, _ body: @Sendable (isolated A) -> NotificationToken) -> NotificationToken {
    body(actor)
}
