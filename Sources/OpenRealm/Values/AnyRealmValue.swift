import Foundation
import RealmStorage

/// A property that holds a value of any persisted type, chosen per object (Realm's "mixed").
///
/// ```swift
/// class Note: Object {
///     @Persisted var value: AnyRealmValue
/// }
/// try realm.write {
///     note.value = .string("hello")
///     note.value = .int(42)
///     note.value = .object(dog)   // a link to an object of any class
/// }
/// if case .int(let n) = note.value { print(n) }
/// ```
///
/// An `AnyRealmValue` can be indexed (`@Persisted(indexed: true)`) and used in `List`,
/// `MutableSet` and `Map`. `.none` is its null: the property itself is never optional. Holding
/// a list or a dictionary inside the value (Realm 10.51) is not supported yet.
public enum AnyRealmValue: Hashable {
    /// No value: the null of a mixed property, and its default.
    case none
    /// An integer, stored as 64 bits.
    case int(Int)
    /// A Boolean.
    case bool(Bool)
    /// A 32-bit floating-point number.
    case float(Float)
    /// A 64-bit floating-point number.
    case double(Double)
    /// A string.
    case string(String)
    /// Bytes.
    case data(Data)
    /// A date.
    case date(Date)
    /// A link to a managed or unmanaged object of any class; assigning an unmanaged object to a
    /// managed property adds it, as links do.
    case object(Object)
    /// An `ObjectId`.
    case objectId(ObjectId)
    /// A `Decimal128`.
    case decimal128(Decimal128)
    /// A `UUID`.
    case uuid(UUID)

    /// The integer, if the value is `.int`; nil otherwise (no conversion between cases).
    public var intValue: Int? { if case .int(let v) = self { return v } else { return nil } }
    /// The Boolean, if the value is `.bool`; nil otherwise.
    public var boolValue: Bool? { if case .bool(let v) = self { return v } else { return nil } }
    /// The number, if the value is `.float`; nil otherwise (a `.double` is not converted).
    public var floatValue: Float? { if case .float(let v) = self { return v } else { return nil } }
    /// The number, if the value is `.double`; nil otherwise (a `.float` or `.int` is not converted).
    public var doubleValue: Double? { if case .double(let v) = self { return v } else { return nil } }
    /// The string, if the value is `.string`; nil otherwise.
    public var stringValue: String? { if case .string(let v) = self { return v } else { return nil } }
    /// The bytes, if the value is `.data`; nil otherwise.
    public var dataValue: Data? { if case .data(let v) = self { return v } else { return nil } }
    /// The date, if the value is `.date`; nil otherwise.
    public var dateValue: Date? { if case .date(let v) = self { return v } else { return nil } }
    /// The `ObjectId`, if the value is `.objectId`; nil otherwise.
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { return v } else { return nil } }
    /// The decimal, if the value is `.decimal128`; nil otherwise.
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { return v } else { return nil } }
    /// The `UUID`, if the value is `.uuid`; nil otherwise.
    public var uuidValue: UUID? { if case .uuid(let v) = self { return v } else { return nil } }

    /// The linked object when it is of class `objectType`: `if let dog = note.value.object(Dog.self) { … }`.
    public func object<T: Object>(_ objectType: T.Type) -> T? {
        if case .object(let v) = self { return v as? T } else { return nil }
    }

    /// The linked object, of whatever class.
    public var dynamicObject: Object? { if case .object(let v) = self { return v } else { return nil } }

    /// `value` as a mixed value: nil is `.none`; integers of any size, `Bool`, `Float`,
    /// `Double`, `String`, `Data`, `Date`, `ObjectId`, `Decimal128`, `UUID` and objects become
    /// their case. Nil for anything else.
    init?(wrapping value: Any?) {
        switch value {
        case nil: self = .none
        case let v as AnyRealmValue: self = v
        case let v as Bool: self = .bool(v)
        case let v as any BinaryInteger:
            guard let int = Int(exactly: v) else { return nil }
            self = .int(int)
        case let v as Float: self = .float(v)
        case let v as Double: self = .double(v)
        case let v as String: self = .string(v)
        case let v as Data: self = .data(v)
        case let v as Date: self = .date(v)
        case let v as ObjectId: self = .objectId(v)
        case let v as Decimal128: self = .decimal128(v)
        case let v as UUID: self = .uuid(v)
        case let v as Object where !(v is EmbeddedObject): self = .object(v)
        default: return nil
        }
    }
}

extension AnyRealmValue: _Persistable, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.mixed, "AnyRealmValue") }
    public static func _rlmDefault() -> AnyRealmValue { .none }

    public static func _rlmGet(_ stored: _StoredValue) -> AnyRealmValue {
        switch stored.value {
        case .null: return .none
        case .int(let v): return .int(Int(truncatingIfNeeded: v))
        case .bool(let v): return .bool(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .binary(let v): return .data(Data(v))
        case .timestamp: return .date(Date._rlmGet(stored))
        case .decimal: return .decimal128(Decimal128._rlmGet(stored))
        case .objectId: return .objectId(ObjectId._rlmGet(stored))
        case .uuid: return .uuid(UUID._rlmGet(stored))
        case .typedLink(let table, let key):
            guard let realm = stored.realm else { return .none }
            return .object(realm.materializeLinked(table: table, key))
        case .link:
            misuse("an AnyRealmValue column holds a plain link: the file is damaged")
        }
    }

    public func _rlmSet() -> _StoredValue {
        switch self {
        case .none: return _StoredValue(.null)
        case .int(let v): return v._rlmSet()
        case .bool(let v): return v._rlmSet()
        case .float(let v): return v._rlmSet()
        case .double(let v): return v._rlmSet()
        case .string(let v): return v._rlmSet()
        case .data(let v): return v._rlmSet()
        case .date(let v): return v._rlmSet()
        case .objectId(let v): return v._rlmSet()
        case .decimal128(let v): return v._rlmSet()
        case .uuid(let v): return v._rlmSet()
        case .object(let object):
            ensure(!(object is EmbeddedObject), "An AnyRealmValue cannot hold an embedded object")
            return _StoredValue(.null, object: object, typedLink: true)
        }
    }
}

extension Decimal128: _Persistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.decimal, "Decimal128") }
    public static func _rlmDefault() -> Decimal128 { Decimal128() }
    public static func _rlmGet(_ stored: _StoredValue) -> Decimal128 {
        guard case .decimal(let bits) = stored.value else { return Decimal128() }
        return Decimal128(low: bits.a, high: bits.b)
    }
    public func _rlmSet() -> _StoredValue { _StoredValue(.decimal(Bytes16(a: low, b: high))) }
}
