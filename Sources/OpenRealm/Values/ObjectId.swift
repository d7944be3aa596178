import Foundation
import RealmStorage

/// A 12-byte identifier, unique without coordination: a 4-byte big-endian timestamp (seconds
/// since 1970), 5 bytes chosen at random once per process, and a 3-byte counter. Ordered by
/// its bytes, so identifiers generated later sort later.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(primaryKey: true) var _id: ObjectId
/// }
/// let id = ObjectId.generate()
/// let same = try ObjectId(string: id.stringValue)
/// ```
public struct ObjectId: Hashable, Comparable, Sendable, CustomStringConvertible, Codable {
    /// The 12 bytes.
    public let bytes: [UInt8]

    /// The zero identifier (what an `ObjectId` property holds until set).
    public init() { bytes = Array(repeating: 0, count: 12) }

    /// The identifier whose bytes are `bytes` (exactly 12).
    public init?(bytes: [UInt8]) {
        guard bytes.count == 12 else { return nil }
        self.bytes = bytes
    }

    /// Parses 24 hexadecimal digits.
    ///
    /// - Throws: `Realm.Error` (`invalidArgument`) when `string` is not 24 hex digits.
    public init(string: String) throws {
        let digits = Array(string.utf8)
        guard digits.count == 24 else {
            throw Realm.Error(.invalidArgument, "an ObjectId is 24 hexadecimal digits; \"\(string)\" has \(digits.count) characters")
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(12)
        for i in stride(from: 0, to: 24, by: 2) {
            guard let high = Self.nibble(digits[i]), let low = Self.nibble(digits[i + 1]) else {
                throw Realm.Error(.invalidArgument, "\"\(string)\" is not hexadecimal")
            }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static let processRandom: [UInt8] = (0..<5).map { _ in UInt8.random(in: 0...255) }
    private static let counter = Locked(UInt32.random(in: 0..<0x100_0000))

    /// A new identifier, unique in this process and, with high probability, everywhere.
    public static func generate() -> ObjectId {
        let seconds = UInt32(truncatingIfNeeded: Int(Date().timeIntervalSince1970))
        let count: UInt32 = counter.withLock { counter in
            counter = (counter + 1) & 0xFF_FFFF
            return counter
        }
        var bytes = withUnsafeBytes(of: seconds.bigEndian, Array.init)
        bytes += processRandom
        bytes += [UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
        return ObjectId(bytes: bytes)!
    }

    /// When the identifier was generated (to the second).
    public var timestamp: Date {
        let seconds = bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The 24 lowercase hexadecimal digits.
    public var stringValue: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(24)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The 24 hexadecimal digits, as ``stringValue``.
    public var description: String { stringValue }

    /// Byte order: the timestamp first, so identifiers generated in a later second sort later.
    public static func < (a: ObjectId, b: ObjectId) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }

    /// Decodes the identifier from a string of 24 hexadecimal digits.
    ///
    /// - Throws: `Realm.Error` (`invalidArgument`) when the string is not one, or the decoder's
    ///   error when the value is not a string.
    public init(from decoder: Decoder) throws {
        try self.init(string: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the identifier as a string of 24 hexadecimal digits: `"5f1b…"` in JSON.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

extension ObjectId: _Persistable, _PrimaryKeyPersistable, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.objectId, "ObjectId") }
    public static func _rlmDefault() -> ObjectId { ObjectId() }
    public static func _rlmGet(_ stored: _StoredValue) -> ObjectId {
        if case .objectId(let b) = stored.value { return ObjectId(b) }
        return ObjectId()
    }
    public func _rlmSet() -> _StoredValue { _StoredValue(.objectId(storedBytes)) }

    init(_ stored: Bytes16) { bytes = stored.bytes(12) }
    var storedBytes: Bytes16 { Bytes16(bytes) }
}

extension UUID: _Persistable, _PrimaryKeyPersistable, _IndexablePersistable {
    public static var _rlmKind: _PropertyKind { _PropertyKind(.uuid, "UUID") }
    public static func _rlmDefault() -> UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    public static func _rlmGet(_ stored: _StoredValue) -> UUID {
        guard case .uuid(let b) = stored.value else { return _rlmDefault() }
        return UUID(b)
    }
    public func _rlmSet() -> _StoredValue { _StoredValue(.uuid(storedBytes)) }

    /// The 16 bytes in order, held as two words in memory order.
    init(_ stored: Bytes16) {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { out in
            withUnsafeBytes(of: (stored.a.littleEndian, stored.b.littleEndian)) { out.copyMemory(from: $0) }
        }
        self.init(uuid: uuid)
    }

    var storedBytes: Bytes16 {
        withUnsafeBytes(of: uuid) { raw in
            Bytes16(a: UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)), b: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
    }
}

/// An enum persisted through its raw value: `enum Color: String, PersistableEnum`.
///
/// A stored raw value no case matches reads as the first case.
///
/// ```swift
/// enum Status: String, PersistableEnum {
///     case open, shipped, delivered
/// }
/// class Order: Object {
///     @Persisted var status: Status      // .open until set: the first case
/// }
/// let open = realm.objects(Order.self).where { $0.status == .open }
/// ```
public protocol PersistableEnum: _Persistable, RawRepresentable, CaseIterable where RawValue: _Persistable {}

extension PersistableEnum {
    public static var _rlmKind: _PropertyKind { _PropertyKind(RawValue._rlmKind.type, String(describing: Self.self)) }
    public static func _rlmDefault() -> Self { allCases.first! }
    public static func _rlmGet(_ stored: _StoredValue) -> Self { Self(rawValue: RawValue._rlmGet(stored)) ?? allCases.first! }
    public func _rlmSet() -> _StoredValue { rawValue._rlmSet() }
}
