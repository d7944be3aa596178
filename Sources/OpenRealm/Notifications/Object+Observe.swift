import Dispatch
import RealmStorage

extension ThreadConfined where Self: Object, Self: SendableMetatype {
    /// The realm the object belongs to, checked for observing.
    private func checkedRealm() -> Realm {
        guard let realm = _managed?.realm else { misuse("Only objects which are managed by a Realm support change notifications") }
        realm.verifyCanObserve()
        return realm
    }

    /// Registers `block` to be called each time the object changes: `.change` with the
    /// properties that changed (their names, old and new values), or `.deleted` once, when the
    /// object is deleted. There is no initial call.
    ///
    /// Calls happen in the realm's context when it moves to a newer version: on its actor or
    /// dispatch queue soon after each commit (the realm's own included); for a realm on a
    /// plain thread, at its next `refresh()` or write. Several commits may be reported as one:
    /// a property set twice reports its value before the first and after the last.
    ///
    /// Without `keyPaths` every property of the object is watched, but not the objects it
    /// links to (object notifications are shallow, as in Realm). With `keyPaths` (property
    /// names, dotted through links: `["owner.name"]`) only those are; a change in a linked
    /// object is reported as a change of the link property.
    ///
    /// ```swift
    /// let token = dog.observe(keyPaths: ["name"]) { change in
    ///     if case .change(_, let properties) = change {
    ///         print(properties.map(\.name))
    ///     }
    /// }
    /// ```
    ///
    /// Keep the token as long as the block should be called.
    ///
    /// Traps (as Realm raises) on an unmanaged, deleted, invalidated or frozen object, a
    /// read-only realm, inside a write transaction, off the realm's thread or actor, and on a
    /// key path that names no property.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        let realm = checkedRealm()
        return realm.register(ObjectSubject(self, keyPaths: keyPaths), block)
    }

    /// `observe(keyPaths:_:)` with the key paths given as Swift key paths (one property each:
    /// use strings for paths through links).
    public func observe(keyPaths: [PartialKeyPath<Self>], _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { QueryProbe.property($0, of: Self.self).name }, block)
    }

    /// Registers `block` to be called on `queue` with the object's changes, as a copy of the
    /// object in a realm opened there (`Realm(configuration:queue:)`). Returns at once.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue,
                        _ block: @escaping @Sendable (ObjectChange<Self>) -> Void) -> NotificationToken {
        let realm = checkedRealm()
        return OpenRealm.observe(ThreadSafeReference(to: self), configuration: realm.configuration, on: queue,
                                 failed: { block(.error($0)) }) { object in object.observe(keyPaths: keyPaths, block) }
    }

    /// Registers `block` to be called on `actor` with the object's changes, as a copy of the
    /// object in a realm opened on that actor. Returns once registered.
    ///
    /// ```swift
    /// let token = await order.observe(on: auditor) { auditor, change in
    ///     auditor.record(change)
    /// }
    /// ```
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @escaping @Sendable (isolated A, ObjectChange<Self>) -> Void) async -> NotificationToken {
        let realm = checkedRealm()
        return await OpenRealm.observe(ThreadSafeReference(to: self), configuration: realm.configuration, on: actor,
                                       failed: { actor, error in block(actor, .error(error)) }) { actor, object in
            object.observe(keyPaths: keyPaths) { change in block(actor, change) }
        }
    }

    /// The object's changes as an `AsyncSequence`, for a `for await` loop on the realm's
    /// actor. The loop ends after `.deleted`, or when its task is cancelled.
    ///
    /// ```swift
    /// for await change in order.changes {
    ///     if case .change(let order, _) = change { await publish(order.status) }
    /// }
    /// ```
    public var changes: ChangeSequence<ObjectChange<Self>> { changes(keyPaths: nil) }

    /// `changes`, watching only `keyPaths` (see `observe`).
    public func changes(keyPaths: [String]?) -> ChangeSequence<ObjectChange<Self>> {
        ChangeSequence { [self] in
            _ = checkedRealm()
            return SubjectChangeStream(ObjectSubject(self, keyPaths: keyPaths))
        }
    }
}
