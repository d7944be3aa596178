import RealmStorage

extension Realm {
    /// What a realm notification block is told.
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
