import RealmStorage

// Frozen data: immutable snapshots of one version.
//
// `freeze()` on a live realm gives a realm that reads the live realm's current version for
// as long as it exists (it holds the version's pin) and can never be written; objects,
// results and collections read from it are frozen too, and `freeze()` on them gives their
// counterparts in that realm. `thaw()` goes back: the same object, results or collection in a
// live realm of the calling thread (nil for an object deleted since).
//
// Frozen values need no confinement checks: nothing they read changes. They still have
// caches (bindings, decoded rows, query results) that are plain unlocked state, so a frozen
// `Realm` or `Object` is not `Sendable` either, and the compiler keeps each instance in one
// isolation domain. To share a snapshot between tasks, wrap it in `Frozen`: a `Sendable`
// value from which each task takes its own instances of the same version (`value`). They
// share the pinned version and the file mapping, read without locks, and keep their caches
// to themselves.

extension Realm {
    /// A frozen snapshot of the version this realm reads: it never changes and cannot be
    /// written; everything read from it is frozen. A frozen realm returns itself.
    ///
    /// Frozen data pins its version, so the file cannot reuse the space that version uses:
    /// keep it only as long as needed (`maximumNumberOfActiveVersions` bounds the pins).
    public func freeze() -> Realm {
        guard !isFrozen else { return self }
        confinement.verify()
        ensure(writeTransaction == nil,
               "Cannot freeze a Realm inside a write transaction: its changes are not committed yet; freeze after the write")
        if let frozen = frozenCache, frozen.readTransaction === readTransaction { return frozen }
        let frozen = Realm(frozenAt: readTransaction, store: store, configuration: configuration)
        frozen.thawTarget = self
        frozenCache = frozen
        return frozen
    }

    /// A live realm of the same file for the calling thread: the realm that was frozen when it
    /// belongs to this thread, else a newly opened one (at the newest version). A live realm
    /// returns itself.
    ///
    /// As in Realm, thawing is meant for threads: on an actor, resolve a `ThreadSafeReference`
    /// in a realm opened on the actor instead.
    public func thaw() -> Realm {
        guard isFrozen else { return self }
        if let live = thawTarget, live.confinement.isCurrent(isolation: nil) { return live }
        do {
            let live = try Realm(configuration: configuration, isolation: nil)
            thawTarget = live
            return live
        } catch {
            misuse("Cannot thaw: opening a live realm of \(configuration.path) failed: \(error)")
        }
    }

    /// `value.freeze()`: the seeds' `realm.freeze(object)` and `realm.freeze(collection)`.
    public func freeze<T: ThreadConfined>(_ value: T) -> T { value.freeze() }

    /// `value.thaw()`: nil when `value` is an object deleted since it was frozen.
    public func thaw<T: ThreadConfined>(_ value: T) -> T? { value.thaw() }

    /// The same object in this realm (another realm of the same file), if it exists here.
    func counterpart<T: Object>(of object: T) -> T? {
        guard let managed = object._managed, let moved = counterpart(ofRow: managed) else { return nil }
        return materialize(type(of: object), moved.binding, moved.key)
    }

    /// The same managed row in this realm, if it exists here.
    func counterpart(ofRow managed: ObjectBase) -> ObjectBase? {
        do {
            guard let binding = try binding(for: managed.schema),
                  try tableView(binding.table).contains(managed.key) else { return nil }
            return ObjectBase(realm: self, binding: binding, key: managed.key)
        } catch {
            misuse("\(error)")
        }
    }
}

extension Object {
    /// Whether the object belongs to a frozen realm.
    public var isFrozen: Bool { _managed?.managedRealm.isFrozen ?? false }

    /// The object in a frozen snapshot of its realm's current version: it never changes and
    /// cannot be changed. A frozen object returns itself; an unmanaged one cannot be frozen.
    public func freeze() -> Self {
        guard let managed = _managed else { misuse("Cannot freeze an unmanaged object: add it to a realm first") }
        guard !managed.managedRealm.isFrozen else { return self }
        ensure(!isInvalidated, "Cannot freeze an object that has been deleted or invalidated")
        guard let frozen = managed.managedRealm.freeze().counterpart(of: self) else {
            misuse("Cannot freeze an object that is not in its realm's current version")
        }
        return frozen
    }

    /// The live object in a realm of the calling thread; nil if it was deleted since it was
    /// frozen. A live or unmanaged object returns itself.
    public func thaw() -> Self? {
        guard let managed = _managed, managed.managedRealm.isFrozen else { return self }
        return managed.managedRealm.thaw().counterpart(of: self)
    }
}

extension Results: ThreadConfined {
    public var isFrozen: Bool { realm.isFrozen }

    /// The same query over a frozen snapshot of the realm's current version.
    public func freeze() -> Results {
        guard !realm.isFrozen else { return self }
        let frozen = realm.freeze()
        return Results(realm: frozen, query: query.moved(from: realm))
    }

    /// The same query over a live realm of the calling thread.
    public func thaw() -> Results? {
        guard realm.isFrozen else { return self }
        return Results(realm: realm.thaw(), query: query.moved(from: realm))
    }
}

extension ResultsQuery {
    /// This query for another realm of the same file (a frozen or thawed one), with empty
    /// caches. A query over a collection's objects takes the objects the collection holds
    /// here: the collection's owner belongs to this realm, not to the other.
    func moved(from realm: Realm) -> ResultsQuery {
        guard case .keys(_, let read) = source else {
            return ResultsQuery(schema: schema, source: .table, predicates: predicates, steps: steps)
        }
        let keys: [ObjectKey]
        do { keys = try read(QueryEvaluator(realm: realm)) } catch {
            readFailure(error, path: realm.configuration.path, reading: "results of \(schema.className)", otherwise: "Reading results failed: \(error)")
        }
        let schema = self.schema
        let source = Source.keys(owner: nil) { (evaluator: QueryEvaluator) throws(StorageError) -> [ObjectKey] in
            // Objects deleted since (when thawed into a newer version) are not there.
            guard let binding = try evaluator.binding(schema) else { return [] }
            let view = try evaluator.view(binding)
            var present: [ObjectKey] = []
            for key in keys where try view.contains(key) { present.append(key) }
            return present
        }
        return ResultsQuery(schema: schema, source: source, predicates: predicates, steps: steps)
    }
}

extension ListStorage {
    /// The owner in a frozen snapshot of its realm (the owner itself when already frozen).
    func frozenOwner(_ what: String) -> ObjectBase {
        guard let owner else { misuse("Cannot freeze an unmanaged \(what): add its object to a realm first") }
        return owner.frozen()
    }
}

extension ObjectBase {
    /// This row in a frozen snapshot of the realm's current version.
    func frozen() -> ObjectBase {
        guard !managedRealm.isFrozen else { return self }
        ensure(!isInvalidated, "Cannot freeze a collection of an object that has been deleted or invalidated")
        guard let frozen = managedRealm.freeze().counterpart(ofRow: self) else {
            misuse("Cannot freeze a collection of an object that is not in its realm's current version")
        }
        return frozen
    }

    /// This row in a live realm of the calling thread, if it still exists.
    func thawed() -> ObjectBase? {
        guard managedRealm.isFrozen else { return self }
        return managedRealm.thaw().counterpart(ofRow: self)
    }
}

extension List: ThreadConfined {
    public var isFrozen: Bool { storage.owner?.managedRealm.isFrozen ?? false }

    /// The list in a frozen snapshot of its realm's current version.
    public func freeze() -> List {
        if isFrozen { return self }
        return List(owner: storage.frozenOwner("list"), property: storage.property)
    }

    /// The live list in a realm of the calling thread; nil if its object was deleted.
    public func thaw() -> List? {
        guard let owner = storage.owner, owner.managedRealm.isFrozen else { return self }
        return owner.thawed().map { List(owner: $0, property: storage.property) }
    }
}

extension MutableSet: ThreadConfined {
    public var isFrozen: Bool { storage.owner?.managedRealm.isFrozen ?? false }

    /// The set in a frozen snapshot of its realm's current version.
    public func freeze() -> MutableSet {
        if isFrozen { return self }
        return MutableSet(owner: storage.frozenOwner("set"), property: storage.property)
    }

    /// The live set in a realm of the calling thread; nil if its object was deleted.
    public func thaw() -> MutableSet? {
        guard let owner = storage.owner, owner.managedRealm.isFrozen else { return self }
        return owner.thawed().map { MutableSet(owner: $0, property: storage.property) }
    }
}

/// A `Map` or `LinkingObjects`: one property of its owner object, frozen and thawed with it.
protocol OwnedProperty: ThreadConfined {
    var owner: ObjectBase? { get }
    var property: Int { get }
    init(owner: ObjectBase, property: Int)
}

extension OwnedProperty {
    /// The same property of the owner in a frozen snapshot of its realm's current version.
    func frozenWithOwner(_ what: String) -> Self {
        guard let owner else { misuse("Cannot freeze an unmanaged \(what): add its object to a realm first") }
        if owner.managedRealm.isFrozen { return self }
        return Self(owner: owner.frozen(), property: property)
    }

    /// The same property of the owner in a live realm of the calling thread; nil if the owner
    /// was deleted.
    func thawedWithOwner() -> Self? {
        guard let owner, owner.managedRealm.isFrozen else { return self }
        return owner.thawed().map { Self(owner: $0, property: property) }
    }
}

extension LinkingObjects: ThreadConfined, OwnedProperty {
    public var isFrozen: Bool { realm?.isFrozen ?? false }

    /// The linking objects in a frozen snapshot of their realm's current version.
    public func freeze() -> LinkingObjects { frozenWithOwner("LinkingObjects") }

    /// The live linking objects in a realm of the calling thread; nil if their object was
    /// deleted.
    public func thaw() -> LinkingObjects? { thawedWithOwner() }
}

extension Map: ThreadConfined, OwnedProperty {
    public var isFrozen: Bool { owner?.managedRealm.isFrozen ?? false }

    /// The map in a frozen snapshot of its realm's current version.
    public func freeze() -> Map { frozenWithOwner("map") }

    /// The live map in a realm of the calling thread; nil if its object was deleted.
    public func thaw() -> Map? { thawedWithOwner() }
}

/// A frozen snapshot that can be shared between tasks and actors: `Sendable`, unlike the
/// realms and objects it holds.
///
/// ```swift
/// let snapshot = Frozen(realm)                      // or Frozen(results), Frozen(person), …
/// await withTaskGroup(of: Int.self) { group in
///     for _ in 0..<8 {
///         group.addTask { snapshot.value.objects(Account.self).sum(ofProperty: "balance") }
///     }
/// }
/// ```
///
/// Each read of `value` gives the caller its own frozen instances of the same version, made
/// anew: cheap (no I/O, no locks), and never shared with another task. The snapshot pins its
/// version while it exists.
public struct Frozen<Value>: @unchecked Sendable {
    // @unchecked: every stored property is immutable. `version` is Sendable; the store is
    // only used to make frozen realms (which read, never write, through it); the
    // configuration is only copied; `make` captures only immutable values (metatypes, keys,
    // property indexes) and is called on a realm made for that call alone.
    private let version: ReadTransaction
    private let store: Store
    private let configuration: Realm.Configuration
    private let make: (Realm) -> Value

    private init(_ realm: Realm, _ make: @escaping (Realm) -> Value) {
        precondition(realm.isFrozen)
        version = realm.readTransaction
        store = realm.store
        configuration = realm.configuration
        self.make = make
    }

    /// The snapshot's value, in a frozen realm of its own made for this caller.
    public var value: Value { make(Realm(frozenAt: version, store: store, configuration: configuration)) }
}

extension Frozen where Value == Realm {
    /// A shareable snapshot of the version `realm` reads (or of the frozen realm's version).
    public init(_ realm: Realm) {
        self.init(realm.freeze()) { $0 }
    }
}

extension Frozen where Value: Object {
    /// A shareable snapshot of a managed object.
    public init(_ object: Value) {
        let frozen = object.freeze()
        let key = frozen._managed!.key
        self.init(frozen.realm!) { realm in realm.materializeLinked(Value.self, key) }
    }
}

extension Frozen {
    /// A shareable snapshot of results: the objects they hold at the realm's current version,
    /// in their order, found once here.
    public init<Element: Object>(_ results: Results<Element>) where Value == Results<Element> {
        let frozen = results.freeze()
        let keys = frozen.keys
        // The results' own schema: a model class's, or a class read from the file.
        let schema = results.query.schema
        self.init(frozen.realm) { realm in
            Results(realm: realm, query: ResultsQuery(schema: schema, source: .keys(owner: nil) { _ in keys }))
        }
    }

    /// A shareable snapshot of a managed list.
    public init<Element>(_ list: List<Element>) where Value == List<Element> {
        let frozen = list.freeze()
        let (owner, property) = (frozen.storage.owner!, frozen.storage.property)
        self.init(owner.managedRealm) { realm in List(owner: Self.owner(owner, in: realm), property: property) }
    }

    /// A shareable snapshot of a managed set.
    public init<Element>(_ set: MutableSet<Element>) where Value == MutableSet<Element> {
        let frozen = set.freeze()
        let (owner, property) = (frozen.storage.owner!, frozen.storage.property)
        self.init(owner.managedRealm) { realm in MutableSet(owner: Self.owner(owner, in: realm), property: property) }
    }

    /// A shareable snapshot of a managed map.
    public init<Key, MapValue>(_ map: Map<Key, MapValue>) where Value == Map<Key, MapValue> {
        let frozen = map.freeze()
        let (owner, property) = (frozen.owner!, frozen.property)
        self.init(owner.managedRealm) { realm in Map(owner: Self.owner(owner, in: realm), property: property) }
    }

    /// `owner`'s row in `realm`, a frozen realm of the same version: it is there.
    private static func owner(_ owner: ObjectBase, in realm: Realm) -> ObjectBase {
        guard let moved = realm.counterpart(ofRow: owner) else { misuse("A frozen snapshot lost its object") }
        return moved
    }
}
