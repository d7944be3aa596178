import Foundation
import RealmStorage

/// How a stored value travels between a Swift property and the engine (an implementation
/// detail of `_Persistable`; not for use outside OpenRealm).
///
/// Scalars, the common case, carry only the value (and the realm on reads): the fields links
/// and collections need live in a box allocated only for them, which keeps this struct small
/// to build, copy and destroy on the insert and read paths.
public struct _StoredValue {
    let value: Value
    /// Reads: the realm the value was read from (to materialise linked objects).
    let realm: Realm?
    private let extras: Extras?

    private final class Extras {
        let object: Object?
        let list: (ObjectBase, Int)?
        let elements: [_StoredValue]?
        let mapKeys: [String]?
        let typedLink: Bool

        init(object: Object?, list: (ObjectBase, Int)?, elements: [_StoredValue]?, mapKeys: [String]?, typedLink: Bool) {
            self.object = object
            self.list = list
            self.elements = elements
            self.mapKeys = mapKeys
            self.typedLink = typedLink
        }
    }

    /// Writes of a link: the object linked to, which may still need adding to the realm.
    var object: Object? { extras?.object }
    /// Reads of a list property: the owning object and property (the list reads live).
    var list: (ObjectBase, Int)? { extras?.list }
    /// Writes of a list property: the elements.
    var elements: [_StoredValue]? { extras?.elements }
    /// Writes of a map property: the keys, parallel to `elements`.
    var mapKeys: [String]? { extras?.mapKeys }
    /// Writes of an `AnyRealmValue` link: store `object` as a typed link (table and key).
    var typedLink: Bool { extras?.typedLink ?? false }

    init(_ value: Value, realm: Realm? = nil) {
        self.value = value
        self.realm = realm
        self.extras = nil
    }

    init(_ value: Value, realm: Realm? = nil, object: Object? = nil, typedLink: Bool = false, list: (ObjectBase, Int)? = nil,
         elements: [_StoredValue]? = nil, mapKeys: [String]? = nil) {
        self.value = value
        self.realm = realm
        if object == nil && list == nil && elements == nil && mapKeys == nil {
            self.extras = nil
        } else {
            self.extras = Extras(object: object, list: list, elements: elements, mapKeys: mapKeys, typedLink: typedLink)
        }
    }
}

/// The storage type of a persisted property (an implementation detail of `_Persistable`).
public struct _PropertyKind: Equatable, CustomStringConvertible {
    let type: ColumnType
    /// The Swift type's name, for error messages.
    let name: String
    /// For links: the class linked to.
    let linkTarget: Object.Type?
    /// A list of values of `type`.
    let isList: Bool
    /// Computed from other objects' links (`LinkingObjects`): no column of its own.
    let isComputed: Bool
    /// A `Map`: the values list, with the keys in a companion column.
    let isMap: Bool

    init(_ type: ColumnType, _ name: String, linkTarget: Object.Type? = nil, isList: Bool = false, isComputed: Bool = false, isMap: Bool = false) {
        self.type = type
        self.name = name
        self.linkTarget = linkTarget
        self.isList = isList
        self.isComputed = isComputed
        self.isMap = isMap
    }

    public var description: String { name }

    public static func == (a: _PropertyKind, b: _PropertyKind) -> Bool {
        a.type == b.type && a.name == b.name && a.isList == b.isList && a.isComputed == b.isComputed && a.isMap == b.isMap
            && a.linkTarget.map(ObjectIdentifier.init) == b.linkTarget.map(ObjectIdentifier.init)
    }
}

/// A type a `@Persisted` property can hold: the seeds' scalar types and their optionals.
///
/// OpenRealm provides the conformances; the requirements are implementation details.
public protocol _Persistable {
    /// An implementation detail: how the type is stored.
    static var _rlmKind: _PropertyKind { get }
    /// An implementation detail: whether the stored column is nullable.
    static var _rlmIsOptional: Bool { get }
    /// The value of a property declared without an initial value.
    static func _rlmDefault() -> Self
    /// An implementation detail: the Swift value of a stored value.
    static func _rlmGet(_ stored: _StoredValue) -> Self
    /// An implementation detail: the stored form of the value.
    func _rlmSet() -> _StoredValue
}

extension _Persistable {
    public static var _rlmIsOptional: Bool { false }
}

/// Types that can be primary keys (Int, String and their optionals).
public protocol _PrimaryKeyPersistable: _Persistable {}

/// Types that can be indexed.
public protocol _IndexablePersistable: _Persistable {}

// MARK: Integers

/// The integer types: all stored in one 64-bit integer column (an implementation detail).
public protocol _PersistableInteger: _Persistable, FixedWidthInteger {}

extension _PersistableInteger {
    public static func _rlmDefault() -> Self { 0 }
    public static func _rlmGet(_ stored: _StoredValue) -> Self {
        if case .int(let v) = stored.value { return Self(truncatingIfNeeded: v) } else { return 0 }
    }
    public func _rlmSet() -> _StoredValue { _StoredValue(.int(Int64(truncatingIfNeeded: self))) }
}

extension Int: _PersistableInteger, _PrimaryKeyPersistable, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.int, "Int") }
}

extension Int8: _PersistableInteger, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.int, "Int8") }
}

extension Int16: _PersistableInteger, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.int, "Int16") }
}

extension Int32: _PersistableInteger, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.int, "Int32") }
}

extension Int64: _PersistableInteger, _PrimaryKeyPersistable, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.int, "Int64") }
}

// MARK: Other scalars

extension Bool: _Persistable, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.bool, "Bool") }
    public static func _rlmDefault() -> Bool { false }
    public static func _rlmGet(_ stored: _StoredValue) -> Bool { if case .bool(let v) = stored.value { return v } else { return false } }
    public func _rlmSet() -> _StoredValue { _StoredValue(.bool(self)) }
}

extension Float: _Persistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.float, "Float") }
    public static func _rlmDefault() -> Float { 0 }
    public static func _rlmGet(_ stored: _StoredValue) -> Float { if case .float(let v) = stored.value { return v } else { return 0 } }
    public func _rlmSet() -> _StoredValue { _StoredValue(.float(self)) }
}

extension Double: _Persistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.double, "Double") }
    public static func _rlmDefault() -> Double { 0 }
    public static func _rlmGet(_ stored: _StoredValue) -> Double { if case .double(let v) = stored.value { return v } else { return 0 } }
    public func _rlmSet() -> _StoredValue { _StoredValue(.double(self)) }
}

extension String: _Persistable, _PrimaryKeyPersistable, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.string, "String") }
    public static func _rlmDefault() -> String { "" }
    public static func _rlmGet(_ stored: _StoredValue) -> String { if case .string(let v) = stored.value { return v } else { return "" } }
    public func _rlmSet() -> _StoredValue { _StoredValue(.string(self)) }
}

extension Data: _Persistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.binary, "Data") }
    public static func _rlmDefault() -> Data { Data() }
    public static func _rlmGet(_ stored: _StoredValue) -> Data { if case .binary(let v) = stored.value { return Data(v) } else { return Data() } }
    public func _rlmSet() -> _StoredValue { _StoredValue(.binary(Array(self))) }
}

extension Date: _Persistable, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.timestamp, "Date") }
    public static func _rlmDefault() -> Date { Date(timeIntervalSince1970: 0) }

    public static func _rlmGet(_ stored: _StoredValue) -> Date {
        guard case .timestamp(let t) = stored.value else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: Double(t.seconds) + Double(t.nanoseconds) / 1e9)
    }

    /// Seconds since 1970 and nanoseconds, as Realm stores dates (sub-microsecond detail of
    /// the Double inside `Date` is rounded to the nanosecond). Dates beyond about ±2.9e11
    /// years are stored as the furthest second the file holds, infinite ones too; a NaN date
    /// (no time at all) is stored as 1970, as Realm stores it.
    public func _rlmSet() -> _StoredValue {
        let interval = timeIntervalSince1970
        // Converting NaN or infinity to an integer traps, so these never reach the arithmetic.
        guard interval.isFinite else {
            let seconds: Int64 = interval.isNaN ? 0 : interval > 0 ? Self.furthestSecond : -Self.furthestSecond
            return _StoredValue(.timestamp(Timestamp(seconds: seconds, nanoseconds: 0)))
        }
        var seconds = interval.rounded(.down)
        var nanoseconds = ((interval - seconds) * 1e9).rounded()
        if nanoseconds >= 1e9 { seconds += 1; nanoseconds -= 1e9 }
        let clamped = min(max(seconds, -Double(Self.furthestSecond)), Double(Self.furthestSecond))
        return _StoredValue(.timestamp(Timestamp(seconds: Int64(clamped), nanoseconds: Int32(nanoseconds))))
    }

    /// The furthest second from 1970 a date is stored as: within Int64, and exactly a Double.
    private static var furthestSecond: Int64 { 9_200_000_000_000_000_000 }
}

// MARK: Optionals

extension Optional: _Persistable where Wrapped: _Persistable {
    public static var _rlmKind: _PropertyKind {
        _PropertyKind(Wrapped._rlmKind.type, Wrapped._rlmKind.name + "?", linkTarget: Wrapped._rlmKind.linkTarget)
    }
    public static var _rlmIsOptional: Bool { true }
    public static func _rlmDefault() -> Wrapped? { nil }
    public static func _rlmGet(_ stored: _StoredValue) -> Wrapped? { stored.value.isNull ? nil : Wrapped._rlmGet(stored) }
    public func _rlmSet() -> _StoredValue { self.map { $0._rlmSet() } ?? _StoredValue(.null) }
}

extension Optional: _PrimaryKeyPersistable where Wrapped: _PrimaryKeyPersistable {}
extension Optional: _IndexablePersistable where Wrapped: _IndexablePersistable {}

// MARK: Links

extension Object: _Persistable {
    /// A to-one link to an object of this class (must be declared optional).
    public static var _rlmKind: _PropertyKind { _PropertyKind(.link, className(), linkTarget: self) }

    public static func _rlmDefault() -> Self {
        misuse("A to-one link must be optional: declare it as `\(className())?`")
    }

    public static func _rlmGet(_ stored: _StoredValue) -> Self {
        // An element of a collection of a class read from the file (ObjectBase.storedElement).
        if self == DynamicObject.self, case .typedLink(let table, let key) = stored.value, let realm = stored.realm {
            return unsafeDowncast(realm.dynamicObject(table: table, key: key), to: self)
        }
        guard case .link(let key) = stored.value, let realm = stored.realm else {
            // Null is what a link to nothing reads as: only a non-optional declaration reads it
            // here. Any other value is no link at all: the file does not hold what its schema says.
            if stored.value.isNull || stored.realm == nil { misuse("A to-one link must be optional: declare it as `\(className())?`") }
            readFailure(Realm.Error(.fileCorrupted, "a link to \(className()) holds \(stored.value)"), path: stored.realm!.configuration.path,
                        reading: "a link to \(className())", otherwise: "")
        }
        return realm.materializeLinked(self, key)
    }

    public func _rlmSet() -> _StoredValue { _StoredValue(.null, object: self) }
}
