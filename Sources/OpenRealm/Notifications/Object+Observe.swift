import Dispatch
import RealmStorage

/// A property that changed, in an object notification.
///
/// Unlike Realm, which fills `oldValue` only for changes made on another thread, the old
/// value is always given here: the observation keeps the values it last reported. For a
/// `List`, `MutableSet` or `Map` property both values are nil (as in Realm); for a link, the
/// old value is the object linked to before, read now: it may have been deleted since
/// (check `isInvalidated`). Also unlike Realm, setting a property to the value it already
/// has is no change: the file is not written, and nothing is reported.
///
/// ```swift
/// let token = dog.observe { change in
///     if case .change(_, let properties) = change {
///         for property in properties {
///             print(property.name, property.oldValue as Any, "→", property.newValue as Any)
///         }
///     }
/// }
/// ```
public struct PropertyChange {
    /// The name of the property that changed.
    public let name: String
    /// Its value before the change.
    public let oldValue: Any?
    /// Its value after the change.
    public let newValue: Any?
}

/// What happened to an observed object, passed to its notification blocks.
///
/// ```swift
/// let token = dog.observe { change in
///     switch change {
///     case .change(let dog, let properties):
///         for property in properties {
///             print("\(property.name): \(property.oldValue ?? "nil") → \(property.newValue ?? "nil")")
///         }
///     case .deleted:
///         print("\(dog) was deleted")
///     case .error(let error):
///         print(error)
///     }
/// }
/// ```
@frozen public enum ObjectChange<T> {
    /// The observation could not be set up (`observe(on:)` could not open the realm there).
    case error(_ error: Error)
    /// One or more of the watched properties changed: the object as it is now, and the
    /// properties with their old and new values.
    case change(_: T, _: [PropertyChange])
    /// The object was deleted. Nothing is delivered after it.
    case deleted
}

extension ObjectChange: _FailableChange {
    public static func _failed(_ error: Error) -> ObjectChange { .error(error) }
}

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
    /// links to (object notifications are shallow, as in Realm), except embedded objects,
    /// which are part of it. With `keyPaths` (property names, dotted through links:
    /// `["owner.name"]`) only those are; a change in a linked object is reported as a change
    /// of the link property.
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

    /// `observe(keyPaths:_:)` with the key paths given as Swift key paths, through to-one
    /// links if need be: `[\.name, \.owner?.name]` (paths through lists, sets, maps and
    /// linking objects are given as strings).
    public func observe(keyPaths: [PartialKeyPath<Self>], _ block: @escaping (ObjectChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { QueryProbe.path($0, of: Self.self) }, block)
    }

    /// Registers `block` to be called on `queue` with the object's changes, as a copy of the
    /// object in a realm opened there (`Realm(configuration:queue:)`). Returns at once. With
    /// `queue` nil, as `observe(keyPaths:_:)`: in the realm's own context (the block must be
    /// `@Sendable` all the same; without `on:`, any block will do).
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping @Sendable (ObjectChange<Self>) -> Void) -> NotificationToken {
        guard let queue else { return observe(keyPaths: keyPaths, block) }
        return OpenRealm.observe(self, of: checkedRealm(), keyPaths: keyPaths, on: queue, block) { $0.observe(keyPaths: $1, $2) }
    }

    /// `observe(keyPaths:on:_:)` with the key paths given as Swift key paths.
    public func observe(keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue?,
                        _ block: @escaping @Sendable (ObjectChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { QueryProbe.path($0, of: Self.self) }, on: queue, block)
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
        await OpenRealm.observe(self, of: checkedRealm(), keyPaths: keyPaths, on: actor, isolation: _isolation, block) {
            $0.observe(keyPaths: $1, $2)
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

    /// `changes(keyPaths:)` with the key paths given as Swift key paths.
    public func changes(keyPaths: [PartialKeyPath<Self>]) -> ChangeSequence<ObjectChange<Self>> {
        changes(keyPaths: keyPaths.map { QueryProbe.path($0, of: Self.self) })
    }

    /// `changes`, watching only `keyPaths` (see `observe`).
    public func changes(keyPaths: [String]?) -> ChangeSequence<ObjectChange<Self>> {
        ChangeSequence { [self] in
            _ = checkedRealm()
            return SubjectChangeStream(ObjectSubject(self, keyPaths: keyPaths))
        }
    }
}
