import RealmStorage

/// Something that belongs to one thread or actor and can be handed to another only through a
/// `ThreadSafeReference` (live objects, as in Realm).
public protocol ThreadConfined {
    /// Whether this is frozen data (Frozen.swift), which any thread may read.
    var isFrozen: Bool { get }
    /// A frozen snapshot of this value at its realm's current version.
    func freeze() -> Self
    /// The live value in a realm of the calling thread; nil when it no longer exists.
    func thaw() -> Self?
}

extension Object: ThreadConfined {}

/// A `Sendable` handle to a managed object, for another thread or actor to resolve in its own
/// realm of the same file.
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
    // @unchecked: every stored property but `state` is immutable after init; `state` is
    // guarded by `lock`. The metatype and the pinned read transaction are safe to share.
    private let path: String
    private let objectType: Object.Type
    private let key: ObjectKey
    private let lock = Mutex()
    /// The pinned source version until the reference is resolved.
    private var state: ReadTransaction?
    private var resolved = false

    /// A reference to `value`, a managed object.
    ///
    /// Traps for an unmanaged, invalidated or frozen-out object, or inside a write transaction
    /// (the object may not be committed yet).
    public init(to value: Confined) {
        guard let object = value as? Object else { misuse("ThreadSafeReference supports objects only") }
        guard let managed = object._managed else {
            misuse("Cannot create a ThreadSafeReference to an unmanaged object: add it to a realm first")
        }
        guard !object.isInvalidated else {
            misuse("Cannot create a ThreadSafeReference to an object that has been deleted or invalidated")
        }
        guard !managed.realm.isInWriteTransaction else {
            misuse("Cannot create a ThreadSafeReference inside a write transaction: commit first, then pass the reference")
        }
        path = managed.realm.configuration.path
        objectType = type(of: object)
        key = managed.key
        state = managed.realm.readTransaction
    }

    /// Takes the reference's source version (once): nil after the first resolve.
    fileprivate func take(into realmPath: String) -> (type: Object.Type, key: ObjectKey, version: VersionID) {
        guard realmPath == path else {
            misuse("Cannot resolve a ThreadSafeReference in a realm of another file (\(realmPath)); it was made in \(path)")
        }
        let taken: ReadTransaction? = lock.withLock {
            guard !resolved else { return nil }
            resolved = true
            defer { state = nil }
            return state
        }
        guard let taken else {
            misuse("Cannot resolve a ThreadSafeReference more than once: make a new reference for each resolve")
        }
        return (objectType, key, taken.version)
    }
}

extension Realm {
    /// The object `reference` points to, in this realm; nil when it was deleted since. If the
    /// reference was made at a newer version than this realm reads, the realm is refreshed
    /// first. A reference resolves at most once (a second resolve traps).
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        let (type, key, version) = reference.take(into: configuration.path)
        if writeTransaction == nil && readTransaction.version < version { refresh() }
        do {
            guard let binding = try binding(for: type) else { return nil }
            guard try tableView(binding.table).contains(key) else { return nil }
            return materialize(type, binding, key) as? Confined
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
@propertyWrapper public final class ThreadSafe<T: Object>: @unchecked Sendable {
    // @unchecked: `reference` and `configuration` are guarded by `lock`.
    private let lock = Mutex()
    private var reference: ThreadSafeReference<T>?
    private var configuration: Realm.Configuration?

    public init(wrappedValue: T?) {
        set(wrappedValue)
    }

    /// The object, resolved in a newly opened realm of its file on the calling thread; nil if
    /// it was deleted (or the wrapper holds none).
    public var wrappedValue: T? {
        get {
            let (reference, configuration) = lock.withLock { (self.reference, self.configuration) }
            guard let reference, let configuration else { return nil }
            guard let realm = try? Realm(configuration: configuration) else { return nil }
            let object = realm.resolve(reference)
            // A reference resolves once: keep a fresh one for the next read.
            lock.withLock {
                if self.reference === reference { self.reference = object.map { ThreadSafeReference(to: $0) } }
            }
            return object
        }
        set { set(newValue) }
    }

    private func set(_ value: T?) {
        let reference = value.map { ThreadSafeReference(to: $0) }
        let configuration = value?.realm?.configuration
        lock.withLock {
            self.reference = reference
            self.configuration = configuration
        }
    }
}
