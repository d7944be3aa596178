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

    package var isNull: Bool { if case .null = self { return true } else { return false } }

    /// Whether the value may be stored in a column of `type`.
    package func fits(_ type: ColumnType, nullable: Bool) -> Bool {
        switch (self, type) {
        case (.null, _): return nullable
        case (.int, .int), (.bool, .bool), (.float, .float), (.double, .double), (.string, .string),
             (.binary, .binary), (.timestamp, .timestamp), (.link, .link):
            return true
        default: return false
        }
    }

    /// Stored size of a string or binary payload (0 for other values).
    package var payloadSize: Int {
        switch self {
        case .string(let s): return s.utf8.count
        case .binary(let b): return b.count
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
        case .link: return .null
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

    package init(name: String, type: ColumnType, nullable: Bool = false, isList: Bool = false,
                 indexed: Bool = false, unique: Bool = false, linkTarget: TableKey? = nil) {
        self.name = name
        self.type = type
        self.nullable = nullable || (type == .link && !isList)
        self.isList = isList
        self.indexed = indexed || unique
        self.unique = unique
        self.linkTarget = linkTarget
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

    /// A column holding single values (not a list, not removed).
    package var isValue: Bool { !isList && !removed }
}

extension ColumnSpec {
    package var layout: ColumnLayout {
        ColumnLayout(type: type, nullable: nullable, isList: isList, indexed: indexed, unique: unique, removed: removed, linkTarget: linkTarget)
    }
}

extension TableInfo {
    package var layouts: [ColumnLayout] { columns.map(\.layout) }
}
