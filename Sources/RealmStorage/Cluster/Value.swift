/// The scalar types a column can hold.
package enum ColumnType: UInt8, Sendable, CaseIterable {
    case int = 1
    case bool = 2
    case float = 3
    case double = 4
    case string = 5
    case binary = 6
    case timestamp = 7
    /// A link to an object of another table (`ColumnSpec.linkTarget`).
    case link = 8
    /// 16 bytes: an IEEE 754-2008 decimal128 in the BID encoding (the engine only stores it).
    case decimal = 9
    /// 12 bytes, ordered by their bytes.
    case objectId = 10
    /// 16 bytes, ordered by their bytes.
    case uuid = 11
    /// Any single value (`Value.mixedTypes`), tagged with its type; `MixedCodec` has the layout.
    case mixed = 12

    /// Stored as byte strings (either string layout).
    package var holdsBytes: Bool { self == .string || self == .binary || self == .mixed }

    /// Bytes each value takes in a fixed-width column block (0 for other types).
    package var fixedWidth: Int {
        switch self {
        case .decimal, .uuid: return 16
        case .objectId: return 12
        default: return 0
        }
    }
}

/// Up to 16 bytes held inline, so that decimals, object ids and UUIDs cost no allocation.
/// `a` holds bytes 0–7 and `b` bytes 8–15, each in memory (little-endian) order.
package struct Bytes16: Hashable, Sendable {
    package var a: UInt64
    package var b: UInt64

    package init(a: UInt64, b: UInt64) {
        self.a = a
        self.b = b
    }

    /// The first `count` bytes of `bytes`, zero-padded to 16.
    package init(_ bytes: some Collection<UInt8>) {
        var raw: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &raw) { out in
            for (i, byte) in bytes.prefix(16).enumerated() { out[i] = byte }
        }
        a = UInt64(littleEndian: raw.0)
        b = UInt64(littleEndian: raw.1)
    }

    /// The first `count` bytes.
    package func bytes(_ count: Int) -> [UInt8] {
        let raw = (a.littleEndian, b.littleEndian)
        return withUnsafeBytes(of: raw) { Array($0.prefix(count)) }
    }
}

/// A point in time with nanosecond precision, as Realm stores dates.
package struct Timestamp: Hashable, Comparable, Sendable {
    package var seconds: Int64
    /// 0 ..< 1_000_000_000.
    package var nanoseconds: Int32

    package init(seconds: Int64, nanoseconds: Int32) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    package static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }
}

/// One stored value. Lists are read and written as `[Value]`.
package enum Value: Hashable, Sendable, CustomStringConvertible {
    case null
    case int(Int64)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case binary([UInt8])
    case timestamp(Timestamp)
    case link(ObjectKey)
    /// A decimal128's bits: `a` the low word, `b` the high word.
    case decimal(Bytes16)
    /// The 12 bytes of an object id (the last 4 of `Bytes16` are zero).
    case objectId(Bytes16)
    case uuid(Bytes16)
    /// A link to an object of any table: only in mixed columns.
    case typedLink(TableKey, ObjectKey)

    package var isNull: Bool { if case .null = self { return true } else { return false } }

    /// Whether the value may be stored in a column of `type`.
    package func fits(_ type: ColumnType, nullable: Bool) -> Bool {
        // A switch on `self` alone: a switch on the tuple `(self, type)` copied the value (a
        // retain and a release for strings, on every insert of every column).
        let own: ColumnType
        switch self {
        case .null: return nullable
        case .int: own = .int
        case .bool: own = .bool
        case .float: own = .float
        case .double: own = .double
        case .string: own = .string
        case .binary: own = .binary
        case .timestamp: own = .timestamp
        case .link: return type == .link  // a mixed column holds typed links only
        case .decimal: own = .decimal
        case .objectId: own = .objectId
        case .uuid: own = .uuid
        case .typedLink: return type == .mixed
        }
        return type == own || type == .mixed
    }

    /// Stored size of a string, binary or fixed-width payload (0 for values held in integers).
    package var payloadSize: Int {
        switch self {
        case .string(let s): return s.utf8.count
        case .binary(let b): return b.count
        case .decimal, .uuid: return 16
        case .objectId, .typedLink: return 12
        default: return 0
        }
    }

    package var description: String {
        switch self {
        case .null: return "null"
        case .int(let v): return "\(v)"
        case .bool(let v): return "\(v)"
        case .float(let v): return "\(v)f"
        case .double(let v): return "\(v)"
        case .string(let v): return "\"\(v)\""
        case .binary(let v): return "<\(v.count) bytes>"
        case .timestamp(let t): return "T(\(t.seconds).\(t.nanoseconds))"
        case .link(let k): return "->\(k.value)"
        case .decimal(let d): return "D(\(String(d.b, radix: 16)):\(String(d.a, radix: 16)))"
        case .objectId(let o): return "OID(\(o.bytes(12).map { String($0, radix: 16) }.joined()))"
        case .uuid(let u): return "UUID(\(u.bytes(16).map { String($0, radix: 16) }.joined()))"
        case .typedLink(let t, let k): return "->\(t.value):\(k.value)"
        }
    }

    /// The default value of a non-nullable column of `type`, used for columns added after
    /// objects exist and for leaves written before a column was added.
    package static func defaultValue(for type: ColumnType, nullable: Bool) -> Value {
        if nullable { return .null }
        switch type {
        case .int: return .int(0)
        case .bool: return .bool(false)
        case .float: return .float(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .binary: return .binary([])
        case .timestamp: return .timestamp(Timestamp(seconds: 0, nanoseconds: 0))
        case .link, .mixed: return .null
        case .decimal: return .decimal(Bytes16(a: 0, b: 0x3040_0000_0000_0000))
        case .objectId: return .objectId(Bytes16(a: 0, b: 0))
        case .uuid: return .uuid(Bytes16(a: 0, b: 0))
        }
    }
}

/// Limits the engine enforces on values (the seeds' limits).
package enum ValueLimits {
    /// Strings and binary values: 16 MiB each.
    package static let maxPayloadSize = 16 << 20
    /// Elements in one list.
    package static let maxListCount = 16 << 20
}

/// The description of one column in the catalogue.
package struct ColumnSpec: Hashable, Sendable {
    package var name: String
    package var type: ColumnType
    package var nullable: Bool
    /// A list of `type` values instead of one value.
    package var isList: Bool
    /// Maintains a search index (value → object key) for the column.
    package var indexed: Bool
    /// The index refuses a second object with the same value (primary keys).
    package var unique: Bool
    /// For links: the table linked to.
    package var linkTarget: TableKey?
    /// A removed column keeps its position so that older leaves stay readable.
    package var removed: Bool = false
    /// An integer column whose value is each object's key (an integer primary key, as
    /// SQLite's INTEGER PRIMARY KEY is the rowid): unique by construction, found by a
    /// descent of the cluster tree, and needing no index. Immutable once the object exists.
    package var isObjectKey: Bool = false
    /// A list column that holds a set (Realm's `MutableSet`): the engine stores and reads it as
    /// any list; the flag only tells code without the model class (the dynamic API, tools)
    /// what the list is. Files written before the flag existed have it clear on every column.
    package var isSet: Bool = false

    package init(name: String, type: ColumnType, nullable: Bool = false, isList: Bool = false,
                 indexed: Bool = false, unique: Bool = false, linkTarget: TableKey? = nil) {
        self.name = name
        self.type = type
        self.nullable = nullable || (type == .link && !isList) || type == .mixed
        self.isList = isList
        self.indexed = indexed || unique
        self.unique = unique
        self.linkTarget = linkTarget
    }

    /// A non-null integer column holding each object's key (see `isObjectKey`).
    package static func objectKey(name: String) -> ColumnSpec {
        var spec = ColumnSpec(name: name, type: .int)
        spec.isObjectKey = true
        return spec
    }
}

/// What the hot paths need to know about a column, without its name: a plain value, so
/// copying it or an array of it costs no reference counting.
package struct ColumnLayout: Equatable, Sendable {
    package var type: ColumnType
    package var nullable: Bool
    package var isList: Bool
    package var indexed: Bool
    package var unique: Bool
    package var removed: Bool
    package var linkTarget: TableKey?
    package var isObjectKey: Bool

    /// A column holding single values (not a list, not removed).
    package var isValue: Bool { !isList && !removed }
}

extension ColumnSpec {
    package var layout: ColumnLayout {
        ColumnLayout(type: type, nullable: nullable, isList: isList, indexed: indexed, unique: unique, removed: removed,
                     linkTarget: linkTarget, isObjectKey: isObjectKey)
    }
}

extension TableInfo {
    package var layouts: [ColumnLayout] { columns.map(\.layout) }
}
