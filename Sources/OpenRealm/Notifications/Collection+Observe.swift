import Dispatch
import RealmStorage

/// A live collection whose changes can be observed: `Results`, `List`, `MutableSet`,
/// `LinkingObjects` (changes by position, `RealmCollectionChange`) and `Map` (changes by key,
/// `RealmMapChange`).
///
/// ```swift
/// let token = person.dogs.observe { change in
///     switch change {
///     case .initial(let dogs): print("\(dogs.count) dogs")
///     case .update(_, let deletions, let insertions, let modifications):
///         print(deletions, insertions, modifications)
///     case .error(let error): print(error)
///     }
/// }
/// ```
public protocol RealmObservableCollection: ThreadConfined, SendableMetatype {
    /// What the collection's notifications report: `RealmCollectionChange<Self>`, or
    /// `RealmMapChange<Self>` for a map.
    associatedtype CollectionChange: _FailableChange
    /// How the collection is observed (an implementation detail, like `_Persistable`'s members).
    var _observable: _ObservableCollection<CollectionChange> { get }
}

/// How a collection is observed: its realm and what an observation of it watches (an
/// implementation detail of `RealmObservableCollection`).
public struct _ObservableCollection<Change> {
    /// The realm, or nil while unmanaged.
    let realm: Realm?
    let register: (_ keyPaths: [String]?, _ block: @escaping (Change) -> Void) -> NotificationToken
    let stream: (_ keyPaths: [String]?) -> ChangeStream<Change>

    init<Subject: ObservedSubject>(realm: Realm?, _ subject: @escaping (_ keyPaths: [String]?) -> Subject) where Subject.Change == Change {
        self.realm = realm
        register = { keyPaths, block in
            let made = subject(keyPaths)
            return made.realm.register(made, block)
        }
        stream = { keyPaths in SubjectChangeStream(subject(keyPaths)) }
    }
}

extension RealmObservableCollection {
    /// The realm the collection belongs to, checked for observing.
    private func checkedRealm() -> Realm {
        guard let realm = _observable.realm else { misuse("Change notifications are only supported on managed collections.") }
        realm.verifyCanObserve()
        return realm
    }

    /// Registers `block` to be called with the collection's changes: first `.initial`, then
    /// `.update` after each commit that inserted, deleted or modified one of its objects or
    /// changed which objects (or values) it holds. Ordered collections report positions (see
    /// `RealmCollectionChange`); a map reports keys (see `RealmMapChange`).
    ///
    /// Calls happen in the realm's context, when it moves to a newer version: on its actor or
    /// dispatch queue soon after each commit (the realm's own included); for a realm on a plain
    /// thread, which has no event loop on Linux, at its next `refresh()` or write. Several
    /// commits may be reported as one; the initial call may already include commits made
    /// after `observe`.
    ///
    /// Without `keyPaths`, a change to any property of an object in the collection, or of an
    /// object it links to (up to four links away), counts as a modification. With
    /// `keyPaths` (property names, dotted through links: `["name", "toys.brand"]`), only
    /// changes to those do; insertions and deletions are always reported.
    ///
    /// Cost: a `Results` over all objects of a class, filtered and sorted by their own
    /// properties, keeps its keys and applies each commit's changes to them, so a delivery
    /// costs what changed (each changed object tested and placed by binary search), and a
    /// commit whose changed objects neither were nor are in the results calls nothing. With
    /// `keyPaths` as well: the watched values of the changed objects are compared as they
    /// were and as they are; for a key path through a link (`"owner.rank"`), a commit that
    /// changes a watched property of linked objects finds the objects linking to them with
    /// one scan of the link column (no scan for a path through linking objects). It reads the
    /// whole results again and compares them when the changes cannot say enough: results of a
    /// list, set or linking objects, a `distinct`, a filter or sort through a link, without
    /// `keyPaths` a change to an object of a class the results link to (or a class linking to
    /// itself), a schema change, changes to more than an eighth of the results, or commits
    /// whose changes are unknown. Kept per observed `Results`: 8 bytes per object.
    ///
    /// ```swift
    /// let token = realm.objects(Dog.self).filter("age < 2").observe(keyPaths: ["name"]) { change in
    ///     if case .update(_, let deletions, let insertions, let modifications) = change {
    ///         print(deletions, insertions, modifications)
    ///     }
    /// }
    /// ```
    ///
    /// Keep the token as long as the block should be called.
    ///
    /// Traps (as Realm raises) on an unmanaged or frozen collection, a read-only realm,
    /// inside a write transaction, off the realm's thread or actor, and on a key path that
    /// names no property.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (CollectionChange) -> Void) -> NotificationToken {
        _ = checkedRealm()
        return _observable.register(keyPaths, block)
    }

    /// Registers `block` to be called on `queue` with the collection's changes, as a copy of
    /// the collection in a realm opened there (`Realm(configuration:queue:)`). Returns at once;
    /// the initial change comes once the realm is open on `queue`. With `queue` nil, as
    /// `observe(keyPaths:_:)`: in the realm's own context.
    ///
    /// ```swift
    /// let queue = DispatchQueue(label: "observer")
    /// let token = dogs.observe(on: queue) { change in print(change) }
    /// ```
    ///
    /// The block must be `@Sendable` here, even for a nil queue: a block that goes to another
    /// queue must be safe to call there. Without `on:`, the overload above takes any block.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping @Sendable (CollectionChange) -> Void) -> NotificationToken {
        guard let queue else { return observe(keyPaths: keyPaths, block) }
        return OpenRealm.observe(self, of: checkedRealm(), keyPaths: keyPaths, on: queue, block) { $0.observe(keyPaths: $1, $2) }
    }

    /// Registers `block` to be called on `actor` with the collection's changes, as a copy of
    /// the collection in a realm opened on that actor. Returns once registered.
    ///
    /// ```swift
    /// let token = await dogs.observe(on: myActor) { actor, change in
    ///     actor.show(change)
    /// }
    /// ```
    public func observe<A: Actor>(keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
                                  _ block: @escaping @Sendable (isolated A, CollectionChange) -> Void) async -> NotificationToken {
        await OpenRealm.observe(self, of: checkedRealm(), keyPaths: keyPaths, on: actor, isolation: _isolation, block) {
            $0.observe(keyPaths: $1, $2)
        }
    }

    /// The collection's changes as an `AsyncSequence`, for a `for await` loop on the realm's
    /// actor: `.initial` first, then `.update`s; several commits arriving while the loop body
    /// runs make one element. The loop ends when its task is cancelled.
    ///
    /// ```swift
    /// for await change in realm.objects(Dog.self).changes {
    ///     print(change)
    /// }
    /// ```
    ///
    /// Traps as `observe` does, and when iterated off the realm's actor.
    public var changes: ChangeSequence<CollectionChange> { changes(keyPaths: nil) }

    /// `changes`, counting as modifications only changes to `keyPaths` (see `observe`).
    public func changes(keyPaths: [String]?) -> ChangeSequence<CollectionChange> {
        ChangeSequence { [self] in
            _ = checkedRealm()
            return _observable.stream(keyPaths)
        }
    }
}

extension RealmObservableCollection where Self: Collection, Element: Object {
    /// `observe(keyPaths:_:)` with the key paths given as Swift key paths of the elements'
    /// properties, through to-one links if need be: `[\.name, \.owner?.name]`. Paths through
    /// lists, sets, maps and linking objects are given as strings.
    ///
    /// ```swift
    /// let token = realm.objects(Dog.self).observe(keyPaths: [\.name]) { change in print(change) }
    /// ```
    public func observe(keyPaths: [PartialKeyPath<Element>], _ block: @escaping (CollectionChange) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { QueryProbe.path($0, of: Element.self) }, block)
    }

    /// `observe(keyPaths:on:_:)` with the key paths given as Swift key paths.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue?,
                        _ block: @escaping @Sendable (CollectionChange) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { QueryProbe.path($0, of: Element.self) }, on: queue, block)
    }

    /// `changes(keyPaths:)` with the key paths given as Swift key paths.
    public func changes(keyPaths: [PartialKeyPath<Element>]) -> ChangeSequence<CollectionChange> {
        changes(keyPaths: keyPaths.map { QueryProbe.path($0, of: Element.self) })
    }
}

extension Map where Value: _OptionalObject {
    /// `observe(keyPaths:_:)` with the key paths given as Swift key paths of the values'
    /// properties (see the collections' `observe(keyPaths:_:)`).
    public func observe(keyPaths: [PartialKeyPath<Value.Wrapped>],
                        _ block: @escaping (RealmMapChange<Map>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { QueryProbe.path($0, of: Value.Wrapped.self) }, block)
    }

    /// `observe(keyPaths:on:_:)` with the key paths given as Swift key paths.
    public func observe(keyPaths: [PartialKeyPath<Value.Wrapped>], on queue: DispatchQueue?,
                        _ block: @escaping @Sendable (RealmMapChange<Map>) -> Void) -> NotificationToken {
        observe(keyPaths: keyPaths.map { QueryProbe.path($0, of: Value.Wrapped.self) }, on: queue, block)
    }
}

extension Results: RealmObservableCollection {
    /// How the results are observed (an implementation detail).
    public var _observable: _ObservableCollection<RealmCollectionChange<Results>> {
        _ObservableCollection(realm: realm) { ResultsSubject(self, keyPaths: $0) }
    }
}

extension List: RealmObservableCollection {
    /// How the list is observed (an implementation detail).
    public var _observable: _ObservableCollection<RealmCollectionChange<List>> {
        _ObservableCollection(realm: realm) { keyPaths in
            ListSubject(collection: self, owned: OwnedCollection(owner: self.storage.owner, property: self.storage.property,
                                                                 elements: Element._rlmKind.linkTarget, keyPaths: keyPaths, what: "List"),
                        replacesInPlace: true)
        }
    }
}

extension MutableSet: RealmObservableCollection {
    /// How the set is observed (an implementation detail).
    public var _observable: _ObservableCollection<RealmCollectionChange<MutableSet>> {
        _ObservableCollection(realm: realm) { keyPaths in
            ListSubject(collection: self, owned: OwnedCollection(owner: self.storage.owner, property: self.storage.property,
                                                                 elements: Element._rlmKind.linkTarget, keyPaths: keyPaths, what: "MutableSet"),
                        replacesInPlace: false)
        }
    }
}

extension LinkingObjects: RealmObservableCollection {
    /// How the linking objects are observed (an implementation detail).
    public var _observable: _ObservableCollection<RealmCollectionChange<LinkingObjects>> {
        _ObservableCollection(realm: realm) { LinkingObjectsSubject<Element>(owner: self.owner, property: self.property, keyPaths: $0) }
    }
}

extension Map: RealmKeyedCollection, RealmObservableCollection {
    /// How the map is observed (an implementation detail).
    public var _observable: _ObservableCollection<RealmMapChange<Map>> {
        _ObservableCollection(realm: realm) { keyPaths in
            MapSubject(map: self, owned: OwnedCollection(owner: self.owner, property: self.property, elements: Value._rlmKind.linkTarget,
                                                         keyPaths: keyPaths, what: "Map"))
        }
    }
}
