import Dispatch
import RealmStorage

extension Map: RealmKeyedCollection {}

extension Map {
    /// The realm the map belongs to, checked for observing.
    private func checkedRealm() -> Realm {
        guard let realm else { misuse("Change notifications are only supported on managed collections.") }
        realm.verifyCanObserve()
        return realm
    }

    private func subject(_ keyPaths: [String]?) -> MapSubject<Key, Value> {
        MapSubject(map: self, owned: OwnedCollection(owner: owner, property: property, elements: Value._rlmKind.linkTarget,
                                                     keyPaths: keyPaths, what: "Map"))
    }

    /// Registers `block` to be called with the map's changes, by key: first `.initial`, then
    /// `.update` with the keys removed, added, and whose values changed (or, for a map of
    /// objects, whose objects were modified: as counted by `keyPaths`, see
    /// `RealmObservableCollection.observe`).
    ///
    /// ```swift
    /// let token = board.scores.observe { change in
    ///     if case .update(_, let deletions, let insertions, let modifications) = change {
    ///         print(deletions, insertions, modifications)
    ///     }
    /// }
    /// ```
    ///
    /// Delivered like every collection notification; traps on the same misuse.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (RealmMapChange<Map>) -> Void) -> NotificationToken {
        let realm = checkedRealm()
        return realm.register(subject(keyPaths), block)
    }

    /// The map's changes as an `AsyncSequence`, for a `for await` loop on the realm's actor.
    public var changes: ChangeSequence<RealmMapChange<Map>> { changes(keyPaths: nil) }

    /// `changes`, counting object modifications only in `keyPaths`.
    public func changes(keyPaths: [String]?) -> ChangeSequence<RealmMapChange<Map>> {
        ChangeSequence { [self] in
            _ = checkedRealm()
            return SubjectChangeStream(subject(keyPaths))
        }
    }
}

// Metatypes cross to the other context with the reference: the key and value types must allow it.
extension Map where Key: SendableMetatype, Value: SendableMetatype {
    /// Registers `block` to be called on `queue` with the map's changes, as a copy of the map
    /// in a realm opened there. Returns at once.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue,
                        _ block: @escaping @Sendable (RealmMapChange<Map>) -> Void) -> NotificationToken {
        let realm = checkedRealm()
        return OpenRealm.observe(ThreadSafeReference(to: self), configuration: realm.configuration, on: queue,
                                 failed: { block(.error($0)) }) { map in map.observe(keyPaths: keyPaths, block) }
    }

    /// Registers `block` to be called on `actor` with the map's changes, as a copy of the map
    /// in a realm opened on that actor. Returns once registered.
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @escaping @Sendable (isolated A, RealmMapChange<Map>) -> Void) async -> NotificationToken {
        let realm = checkedRealm()
        return await OpenRealm.observe(ThreadSafeReference(to: self), configuration: realm.configuration, on: actor,
                                       failed: { actor, error in block(actor, .error(error)) }) { actor, map in
            map.observe(keyPaths: keyPaths) { change in block(actor, change) }
        }
    }
}
