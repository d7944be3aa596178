import RealmStorage

/// Something that belongs to one thread or actor and can be handed to another only through a
/// `ThreadSafeReference` (live objects, as in Realm).
///
/// ```swift
/// let reference = ThreadSafeReference(to: person)
/// Task.detached {
///     let realm = try Realm()
///     guard let person = realm.resolve(reference) else { return }   // deleted meanwhile
///     print(person.name)
/// }
/// ```
public protocol ThreadConfined {
    /// Whether this is frozen data (Frozen.swift), which any thread may read.
    var isFrozen: Bool { get }
    /// A frozen snapshot of this value at its realm's current version.
    func freeze() -> Self
    /// The live value in a realm of the calling thread; nil when it no longer exists.
    func thaw() -> Self?
}

extension Object: ThreadConfined {}

/// A `Sendable` handle to a managed object, results, or a managed list, set, map or linking
/// objects, for another
/// thread or actor to resolve in its own realm of the same file.
///
/// ```swift
/// let reference = ThreadSafeReference(to: person)
/// Task.detached {
///     let realm = try Realm(configuration: configuration)
///     guard let person = realm.resolve(reference) else { return } // deleted meanwhile
///     try realm.write { person.name = "Jane Doe" }
/// }
/// ```
///
/// Until it is resolved (at most once) or released, the reference pins the version it was made
/// at, as Realm does: keep references short-lived.
public final class ThreadSafeReference<Confined: ThreadConfined>: @unchecked Sendable {
    // @unchecked: `path` and `make` are immutable after init, and `make` captures only
    // immutable values (metatypes, keys, property indexes, a query made for the resolving
    // realm and used only there); `source` is a lock.
    private let path: String
    private let make: (Realm) -> Confined?
    /// The pinned source version until the reference is resolved, and whether it was.
    private let source: Locked<(pinned: ReadTransaction?, resolved: Bool)>

    /// A reference to `value`: a managed object, results, or a managed list, set or map.
    ///
    /// Traps for unmanaged, invalidated or frozen values (frozen data travels in `Frozen`),
    /// or inside a write transaction (the value may not be committed yet).
    public init(to value: Confined) {
        guard let referable = value as? any ThreadSafeReferable else {
            misuse("ThreadSafeReference supports objects, results, lists, sets and maps")
        }
        let (realm, make) = referable.threadSafeRecipe()
        guard !realm.isFrozen else {
            misuse("Cannot create a ThreadSafeReference to frozen data: frozen data can be shared as it is, in a Frozen")
        }
        guard !realm.isInWriteTransaction else {
            misuse("Cannot create a ThreadSafeReference inside a write transaction: commit first, then pass the reference")
        }
        path = realm.configuration.path
        self.make = { make($0) as? Confined }
        source = Locked((realm.readTransaction, false))
    }

    /// Takes the reference's source version (once); traps on a second resolve.
    fileprivate func take(into realmPath: String) -> (version: VersionID, make: (Realm) -> Confined?) {
        guard realmPath == path else {
            misuse("Cannot resolve a ThreadSafeReference in a realm of another file (\(realmPath)); it was made in \(path)")
        }
        let taken: ReadTransaction? = source.withLock { source in
            guard !source.resolved else { return nil }
            source.resolved = true
            defer { source.pinned = nil }
            return source.pinned
        }
        guard let taken else {
            misuse("Cannot resolve a ThreadSafeReference more than once: make a new reference for each resolve")
        }
        return (taken.version, make)
    }
}

/// What a `ThreadSafeReference` can point to: the value's realm, and how to find the value
/// again in another realm of the same file (nil when it is gone there).
protocol ThreadSafeReferable {
    func threadSafeRecipe() -> (Realm, (Realm) -> Any?)
}

extension Object: ThreadSafeReferable {
    func threadSafeRecipe() -> (Realm, (Realm) -> Any?) {
        guard let managed = _managed else {
            misuse("Cannot create a ThreadSafeReference to an unmanaged object: add it to a realm first")
        }
        guard !isInvalidated else {
            misuse("Cannot create a ThreadSafeReference to an object that has been deleted or invalidated")
        }
        let (type, key) = (Swift.type(of: self), managed.key)
        return (managed.managedRealm, { realm in realm.existingObject(type, key) })
    }
}

extension Results: ThreadSafeReferable {
    func threadSafeRecipe() -> (Realm, (Realm) -> Any?) {
        // Made here: a query over a collection takes the collection's objects now.
        let query = self.query.moved(from: realm)
        return (realm, { realm in Results(realm: realm, query: query) })
    }
}

extension ListStorage {
    /// The owner's class and key, and the property, for finding the collection again.
    func threadSafeOwner(_ what: String) -> (Realm, Object.Type, ObjectKey, Int) {
        guard let owner else { misuse("Cannot create a ThreadSafeReference to an unmanaged \(what): add its object to a realm first") }
        return (owner.managedRealm, owner.schema.objectType, owner.key, property)
    }
}

extension List: ThreadSafeReferable {
    func threadSafeRecipe() -> (Realm, (Realm) -> Any?) {
        let (source, type, key, property) = storage.threadSafeOwner("list")
        return (source, { realm in realm.existingObject(type, key).map { List(owner: $0._managed!, property: property) } })
    }
}

extension MutableSet: ThreadSafeReferable {
    func threadSafeRecipe() -> (Realm, (Realm) -> Any?) {
        let (source, type, key, property) = storage.threadSafeOwner("set")
        return (source, { realm in realm.existingObject(type, key).map { MutableSet(owner: $0._managed!, property: property) } })
    }
}

extension Map: ThreadSafeReferable {
    func threadSafeRecipe() -> (Realm, (Realm) -> Any?) {
        guard let owner else { misuse("Cannot create a ThreadSafeReference to an unmanaged map: add its object to a realm first") }
        let (type, key, property) = (owner.schema.objectType, owner.key, self.property)
        return (owner.managedRealm, { realm in realm.existingObject(type, key).map { Map(owner: $0._managed!, property: property) } })
    }
}

extension LinkingObjects: ThreadSafeReferable {
    func threadSafeRecipe() -> (Realm, (Realm) -> Any?) {
        guard let owner else { misuse("Cannot create a ThreadSafeReference to unmanaged linking objects: add their object to a realm first") }
        let (type, key, property) = (owner.schema.objectType, owner.key, self.property)
        return (owner.managedRealm, { realm in realm.existingObject(type, key).map { LinkingObjects(owner: $0._managed!, property: property) } })
    }
}

extension Realm {
    /// The value `reference` points to, in this realm; nil when it was deleted since. If the
    /// reference was made at a newer version than this realm reads, the realm is refreshed
    /// first. A reference resolves at most once (a second resolve traps).
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        confinement.verify()
        ensure(!isFrozen, "Cannot resolve a ThreadSafeReference in a frozen realm: resolve it in a live realm")
        let (version, make) = reference.take(into: configuration.path)
        if writeTransaction == nil && readTransaction.version < version { refresh() }
        return make(self)
    }

    /// The object of `type` with `key` in this realm, if it exists here.
    func existingObject(_ type: Object.Type, _ key: ObjectKey) -> Object? {
        do {
            guard let binding = try binding(for: type), try tableView(binding.table).contains(key) else { return nil }
            return materialize(type, binding, key)
        } catch {
            misuse("\(error)")
        }
    }

    /// How many versions of this file are pinned now in this process (by live realms, frozen
    /// data and unresolved thread-safe references). `maximumNumberOfActiveVersions` bounds it.
    public var numberOfActiveVersions: Int { store.activeVersionCount }
}

/// A property wrapper that keeps a `ThreadSafeReference` to an object, so that a type holding
/// it can be `Sendable`; reading it resolves the object in a realm of the reading thread.
///
/// ```swift
/// func loadNameInBackground(@ThreadSafe person: Person?) async { … }
/// ```
///
/// The value is always optional: nil when the object was deleted.
@propertyWrapper public final class ThreadSafe<T: Object>: Sendable {
    private let held = Locked<(reference: ThreadSafeReference<T>?, configuration: Realm.Configuration?)>((nil, nil))

    /// Keeps a reference to `wrappedValue` (a managed object, or nil).
    public init(wrappedValue: T?) {
        set(wrappedValue)
    }

    /// The object, resolved in a newly opened realm of its file on the calling thread; nil if
    /// it was deleted (or the wrapper holds none).
    public var wrappedValue: T? {
        get {
            let (reference, configuration) = held.withLock { $0 }
            guard let reference, let configuration else { return nil }
            guard let realm = try? Realm(configuration: configuration) else { return nil }
            let object = realm.resolve(reference)
            // A reference resolves once: keep a fresh one for the next read.
            held.withLock { held in
                if held.reference === reference { held.reference = object.map { ThreadSafeReference(to: $0) } }
            }
            return object
        }
        set { set(newValue) }
    }

    private func set(_ value: T?) {
        let reference = value.map { ThreadSafeReference(to: $0) }
        let configuration = value?.realm?.configuration
        held.withLock { $0 = (reference, configuration) }
    }
}
