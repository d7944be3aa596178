import Foundation
import RealmStorage

/// Declares a persisted property of an `Object` subclass.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(primaryKey: true) var id = 0
///     @Persisted var name = ""
///     @Persisted var breed: String?
///     @Persisted(indexed: true) var age = 0
/// }
/// ```
///
/// Properties without `@Persisted` are ignored. An unmanaged object keeps its values in the
/// wrapper like any Swift property; once the object is managed (added to or read from a
/// realm) every read and write goes to the realm file.
// The initialisers and the accessor are `@inlinable`: a model class lives in the user's module,
// and a generic wrapper used across the module boundary without specialisation pays for type
// metadata lookups and generic key-path application on every access (measured: several
// thousand instructions per property access, see BENCHMARKS.md).
@propertyWrapper
public struct Persisted<Value: _Persistable> {
    @usableFromInline
    enum Storage {
        /// Unmanaged: the value itself.
        case unmanaged(Value)
        /// Marks the wrapper while the schema looks for its name (`propertyIndex(ofWrapperAt:)`),
        /// and every wrapper of a query probe (QueryProbe.swift).
        case probe
    }

    @usableFromInline var storage: Storage
    /// Once the object is managed: this property's index in its class's schema (else -1).
    /// A plain integer at a fixed place in the wrapper, so that making an object managed can
    /// set it without generic code (ObjectSchema.markManaged).
    @usableFromInline var managedIndex: Int = -1
    @usableFromInline let isPrimaryKey: Bool
    @usableFromInline let isIndexed: Bool
    /// For `LinkingObjects`: the property of the linking class that points here, as its
    /// number in `OriginPropertyNames` (-1 for other properties). A number, not a `String?`:
    /// every wrapper of every object carried the string, in size and in a release when the
    /// object went away.
    @usableFromInline let originNumber: Int32

    /// A property whose initial value is the type's default (0, "", nil, …).
    @inlinable
    public init() {
        self.init(value: Value._rlmDefault(), primaryKey: false, indexed: false)
    }

    /// A property with an initial value: `@Persisted var name = "Rex"`.
    @inlinable
    public init(wrappedValue: Value) {
        self.init(value: wrappedValue, primaryKey: false, indexed: false)
    }

    @inlinable
    init(value: Value, primaryKey: Bool, indexed: Bool, originNumber: Int32 = -1) {
        storage = .unmanaged(value)
        isPrimaryKey = primaryKey
        isIndexed = indexed || primaryKey
        self.originNumber = originNumber
    }

    /// For `LinkingObjects`: the property of the linking class that points here.
    var originProperty: String? { originNumber < 0 ? nil : OriginPropertyNames.name(originNumber) }

    /// Unavailable: `@Persisted` works only on a property of an `Object` subclass, which reads
    /// and writes through the enclosing-instance subscript.
    @available(*, unavailable, message: "@Persisted can only be used on a property of a class derived from Object")
    public var wrappedValue: Value {
        get { misuse("@Persisted can only be used on a property of a class derived from Object") }
        // swiftlint:disable:next unused_setter_value
        set { misuse("@Persisted can only be used on a property of a class derived from Object") }
    }

    // Always inlined into the model's accessor: there the key path is a literal, and the
    // optimiser turns `object[keyPath: storageKeyPath]` into a plain field access. Not
    // inlined, each access instantiates and applies a generic key path (about 1,200
    // instructions; see BENCHMARKS.md). The managed paths call out of line.
    /// The property index of a managed object's wrapper: kept in the wrapper once known.
    /// Inlined with the accessor, where the key path is a literal and only reaches fields;
    /// the lookup uses the wrapper's address, because handing the key path itself to a call
    /// would make every call site build it (see `propertyIndex(ofWrapperAt:)`).
    @inlinable @inline(__always)
    static func managedIndex<EnclosingSelf: Object>(
        of object: EnclosingSelf, _ storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Int {
        let index = object[keyPath: storageKeyPath].managedIndex
        if index >= 0 { return index }
        return withUnsafeMutablePointer(to: &object[keyPath: storageKeyPath]) { wrapper in
            object.propertyIndex(ofWrapperAt: UnsafeMutableRawPointer(wrapper), Persisted<Value>.self)
        }
    }

    /// The value of the property on `object` (an implementation detail of property wrappers):
    /// the wrapper's own value while the object is unmanaged, else the realm's.
    @inlinable @inline(__always)
    public static subscript<EnclosingSelf: Object>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        // The managed paths call the object itself (its managed state is its superclass's),
        // not `_managed`: that optional reference was a retain and a release per access.
        get {
            guard object._isManaged else {
                if case .unmanaged(let value) = object[keyPath: storageKeyPath].storage { return value }
                // A probe: a type-safe query is finding out which property a key path reads.
                withUnsafeMutablePointer(to: &object[keyPath: storageKeyPath]) { QueryProbe.record(object, UnsafeMutableRawPointer($0)) }
                if let linked = QueryProbe.linkedProbe(Value._rlmKind, from: object) as? Value { return linked }
                return Value._rlmDefault()
            }
            let index = managedIndex(of: object, storageKeyPath)
            return Value._rlmGet(object.read(index))
        }
        set {
            guard object._isManaged else {
                object[keyPath: storageKeyPath].storage = .unmanaged(newValue)
                return
            }
            let index = managedIndex(of: object, storageKeyPath)
            object.write(index, newValue._rlmSet(), isPrimaryKey: object[keyPath: storageKeyPath].isPrimaryKey)
        }
    }
}

extension Persisted where Value: _PrimaryKeyPersistable {
    /// A primary key: unique among the objects of its type, and fixed once the object is
    /// managed.
    @inlinable
    public init(wrappedValue: Value, primaryKey: Bool) {
        self.init(value: wrappedValue, primaryKey: primaryKey, indexed: false)
    }

    /// A primary key whose initial value is the type's default:
    /// `@Persisted(primaryKey: true) var id: ObjectId`.
    @inlinable
    public init(primaryKey: Bool) {
        self.init(value: Value._rlmDefault(), primaryKey: primaryKey, indexed: false)
    }
}

extension Persisted where Value: _LinkingObjectsProtocol {
    /// The objects whose `originProperty` (a link or a list of links) points at this object:
    /// `@Persisted(originProperty: "owner") var pets: LinkingObjects<Pet>`.
    @inlinable
    public init(originProperty: String) {
        self.init(value: Value._rlmDefault(), primaryKey: false, indexed: false, originNumber: OriginPropertyNames.number(for: originProperty))
    }
}

extension Persisted where Value: _IndexablePersistable {
    /// An indexed property: equality and `IN` queries go through a search index.
    @inlinable
    public init(wrappedValue: Value, indexed: Bool) {
        self.init(value: wrappedValue, primaryKey: false, indexed: indexed)
    }

    /// An indexed property whose initial value is the type's default:
    /// `@Persisted(indexed: true) var email: String?`.
    @inlinable
    public init(indexed: Bool) {
        self.init(value: Value._rlmDefault(), primaryKey: false, indexed: indexed)
    }
}

/// What schema discovery and `add` read from a wrapper found in the field metadata (ObjectSchema.swift).
protocol PersistedProperty {
    var propertyKind: _PropertyKind { get }
    var originProperty: String? { get }
    var isOptional: Bool { get }
    var isPrimaryKey: Bool { get }
    var isIndexed: Bool { get }
    var isProbe: Bool { get }
    /// The unmanaged value, as the engine stores it.
    var unmanagedValue: _StoredValue { get }
    /// A function reading the unmanaged value of a wrapper of this type at an address,
    /// without type metadata lookups where it can.
    static var unmanagedReader: (UnsafeRawPointer) -> _StoredValue { get }
    /// For plain values (no link or collection): a function reading the engine value alone,
    /// which for the common types makes no `_StoredValue` (`add`'s fast path).
    static var plainReader: PlainReader { get }
    /// A copy of the wrapper of this type at `address` (an offset the field metadata gave).
    static func wrapper(at address: UnsafeRawPointer) -> PersistedProperty
    /// Marks the wrapper at `address` as a probe; returns what was there, for `restore`.
    static func markProbe(at address: UnsafeMutableRawPointer) -> Any
    static func restore(_ saved: Any, at address: UnsafeMutableRawPointer)
    /// Where `managedIndex` lies within a wrapper of this type.
    static var managedIndexOffset: Int { get }
    /// Sets the unmanaged value of the wrapper of this type at `address` from a loosely typed
    /// value (see ValueConversion.swift); `objects` makes the objects nested values stand for.
    static func setUnmanaged(_ value: Any?, at address: UnsafeMutableRawPointer, objects: LinkedObjectMaker) throws(ValueMismatch)
    /// The property's Swift value on `object`, whether managed or not.
    func value(in object: Object) -> Any?
    /// The Swift value of a stored value read from the file (for change notifications'
    /// old and new values).
    static func swiftValue(_ stored: _StoredValue) -> Any?
    /// The stored form of a loosely typed value for this property (`Object.subscript(key:)`),
    /// converted as `create` converts it.
    static func stored(_ value: Any?, objects: LinkedObjectMaker) throws(ValueMismatch) -> _StoredValue
}

extension Persisted: PersistedProperty {
    static func wrapper(at address: UnsafeRawPointer) -> PersistedProperty { address.load(as: Self.self) }

    // `add` reads unmanaged values through the type-erased `PersistedProperty` metatype. The
    // generic body asks the runtime for `Persisted<Value>`'s metadata on every call (a cache
    // lookup of about 460 instructions, more than the read itself), so schema discovery takes
    // a reader once per property: for the common types a function compiled for that type,
    // which needs no metadata; for the others the generic body.
    static var unmanagedReader: (UnsafeRawPointer) -> _StoredValue {
        switch ObjectIdentifier(Value.self) {
        case ObjectIdentifier(Int.self): return reader(Int.self)
        case ObjectIdentifier(Int?.self): return reader(Int?.self)
        case ObjectIdentifier(Int64.self): return reader(Int64.self)
        case ObjectIdentifier(String.self): return reader(String.self)
        case ObjectIdentifier(String?.self): return reader(String?.self)
        case ObjectIdentifier(Double.self): return reader(Double.self)
        case ObjectIdentifier(Double?.self): return reader(Double?.self)
        case ObjectIdentifier(Float.self): return reader(Float.self)
        case ObjectIdentifier(Bool.self): return reader(Bool.self)
        case ObjectIdentifier(Bool?.self): return reader(Bool?.self)
        case ObjectIdentifier(Date.self): return reader(Date.self)
        case ObjectIdentifier(Date?.self): return reader(Date?.self)
        case ObjectIdentifier(Data.self): return reader(Data.self)
        case ObjectIdentifier(ObjectId.self): return reader(ObjectId.self)
        case ObjectIdentifier(UUID.self): return reader(UUID.self)
        default: return reader(Value.self)
        }
    }

    static var plainReader: PlainReader {
        switch ObjectIdentifier(Value.self) {
        case ObjectIdentifier(Int.self): return .int
        case ObjectIdentifier(Int64.self): return .int64
        case ObjectIdentifier(String.self): return .string
        case ObjectIdentifier(String?.self): return .optionalString
        case ObjectIdentifier(Double.self): return .double
        case ObjectIdentifier(Bool.self): return .bool
        default:
            let read = unmanagedReader
            return .other { read($0).value }
        }
    }

    static func markProbe(at address: UnsafeMutableRawPointer) -> Any {
        let wrapper = address.assumingMemoryBound(to: Persisted<Value>.self)
        let saved = wrapper.pointee
        wrapper.pointee.storage = .probe
        return saved
    }

    static func restore(_ saved: Any, at address: UnsafeMutableRawPointer) {
        if let saved = saved as? Persisted<Value> { address.assumingMemoryBound(to: Persisted<Value>.self).pointee = saved }
    }

    func value(in object: Object) -> Any? {
        if managedIndex >= 0, object._isManaged { return Value._rlmGet(object.read(managedIndex)) }
        if case .unmanaged(let value) = storage { return value }
        return nil
    }

    static func swiftValue(_ stored: _StoredValue) -> Any? {
        let value: Any = Value._rlmGet(stored)
        // An optional property's value is the wrapped value or nil, not an `Any` holding an
        // `Optional`.
        if let optional = value as? any OptionalMarker { return optional.wrappedValue }
        return value
    }

    static func setUnmanaged(_ value: Any?, at address: UnsafeMutableRawPointer, objects: LinkedObjectMaker) throws(ValueMismatch) {
        let converted = try ValueConversion.convert(value, to: Value.self, objects: objects)
        address.assumingMemoryBound(to: Persisted<Value>.self).pointee.storage = .unmanaged(converted)
    }

    static func stored(_ value: Any?, objects: LinkedObjectMaker) throws(ValueMismatch) -> _StoredValue {
        try ValueConversion.convert(value, to: Value.self, objects: objects)._rlmSet()
    }

    static var managedIndexOffset: Int { MemoryLayout<Persisted<Value>>.offset(of: \Persisted<Value>.managedIndex)! }

    var propertyKind: _PropertyKind { Value._rlmKind }
    var isOptional: Bool { Value._rlmIsOptional }
    var isProbe: Bool { if case .probe = storage { return true } else { return false } }
    var unmanagedValue: _StoredValue {
        if case .unmanaged(let value) = storage { return value._rlmSet() }
        return Value._rlmDefault()._rlmSet()
    }
}

/// How `add` reads the engine value of a plain property's unmanaged wrapper. The common
/// types are read in place by `value(at:)`, a switch compiled for each type; a function per
/// property cost a call through a reabstraction thunk and a retain and release of its context
/// on every read (about 90 instructions a property; callgrind, W1).
enum PlainReader {
    case int, int64, string, optionalString, double, bool
    /// Any other plain type: its generic reader.
    case other((UnsafeRawPointer) -> RealmStorage.Value)

    @inline(__always)
    func value(at pointer: UnsafeRawPointer) -> RealmStorage.Value {
        switch self {
        case .int: return Self.unmanaged(Int.self, at: pointer).map { .int(Int64($0)) } ?? .int(0)
        case .int64: return Self.unmanaged(Int64.self, at: pointer).map { .int($0) } ?? .int(0)
        case .string: return Self.unmanaged(String.self, at: pointer).map { .string($0) } ?? .string("")
        case .optionalString: return Self.unmanaged(String?.self, at: pointer)?.map { .string($0) } ?? .null
        case .double: return Self.unmanaged(Double.self, at: pointer).map { .double($0) } ?? .double(0)
        case .bool: return Self.unmanaged(Bool.self, at: pointer).map { .bool($0) } ?? .bool(false)
        case .other(let read): return read(pointer)
        }
    }

    /// The value of the unmanaged `Persisted<V>` at `pointer` (nil for a probe, which reads as
    /// the type's default).
    @inline(__always)
    private static func unmanaged<V: _Persistable>(_: V.Type, at pointer: UnsafeRawPointer) -> V? {
        if case .unmanaged(let value) = pointer.assumingMemoryBound(to: Persisted<V>.self).pointee.storage { return value }
        return nil
    }
}

/// A reader of unmanaged `Persisted<V>` values, specialised for the `V` it is called with
/// (a top-level function: nested in `Persisted` it would capture the generic context). Called
/// with a generic `V`, it is the generic body.
private func reader<V: _Persistable>(_: V.Type) -> (UnsafeRawPointer) -> _StoredValue {
    { $0.assumingMemoryBound(to: Persisted<V>.self).pointee.unmanagedValue }
}

/// The origin property names of `LinkingObjects` wrappers, each stored once: a wrapper keeps
/// its name's number (`Persisted.originNumber`).
@usableFromInline
enum OriginPropertyNames {
    private static let table = Table()

    /// The number of `name`, added on first use.
    @usableFromInline
    static func number(for name: String) -> Int32 { table.number(for: name) }

    static func name(_ number: Int32) -> String { table.name(number) }

    private final class Table: Sendable {
        private struct Names {
            var names: [String] = []
            var numbers: [String: Int32] = [:]
        }

        private let state = Locked(Names())

        func number(for name: String) -> Int32 {
            state.withLock { state in
                if let number = state.numbers[name] { return number }
                let number = Int32(state.names.count)
                state.names.append(name)
                state.numbers[name] = number
                return number
            }
        }

        func name(_ number: Int32) -> String { state.withLock { $0.names[Int(number)] } }
    }
}

/// Recognises an optional inside an `Any` (`swiftValue`, `Object.subscript(key:)`).
protocol OptionalMarker {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalMarker {
    var wrappedValue: Any? { self.map { $0 as Any } }
}
