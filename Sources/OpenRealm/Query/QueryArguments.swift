import Foundation
import RealmStorage

// Constants of a predicate as engine values: `%@` arguments (any Swift value a property can
// hold, a managed object, nil, or a collection of those for IN and BETWEEN) and string
// literals, checked against the type they are compared with.

enum QueryArguments {
    /// The elements of a collection argument (IN, BETWEEN), or nil when it is not one.
    static func elements(of argument: Any) -> [Any]? {
        guard let argument = ValueConversion.unwrapped(argument) else { return nil }
        if argument is String || argument is Data { return nil }
        if let array = argument as? [Any] { return array }
        guard let sequence = argument as? any Sequence else { return nil }
        return elements(sequence)
    }

    private static func elements<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 } }

    /// Argument `index` (or a constant written in the predicate, when `index` is nil) as a
    /// value compared with values of `type`.
    static func value(_ argument: Any?, as type: ColumnType, linkingTo target: String? = nil, argument index: Int?,
                      position: Int) throws(QueryError) -> Value {
        // NSNull is how NSPredicate users spell nil in an argument list.
        guard let argument = ValueConversion.unwrapped(argument), !(argument is NSNull) else { return .null }
        let what = index.map { "argument \($0) (\(describe(argument)))" } ?? "\(describe(argument))"
        let value: Value
        if let object = argument as? Object {
            guard let managed = object._managed else {
                throw QueryError(position: position, reason: "\(what) is an unmanaged object: add it to the realm before querying for it")
            }
            guard type == .link || type == .mixed else {
                throw QueryError(position: position, reason: "\(what) is an object; the property holds \(QueryBinder.typeName(type))")
            }
            if type == .link, let target, managed.schema.className != target {
                throw QueryError(position: position, reason: "\(what) is a \(managed.schema.className); the property links to \(target)")
            }
            return type == .mixed ? .typedLink(managed.table, managed.key) : .link(managed.key)
        } else if let persistable = argument as? _Persistable, !(argument is AnyRealmValue), Swift.type(of: persistable)._rlmKind.linkTarget == nil,
                  !Swift.type(of: persistable)._rlmKind.isList {
            value = persistable._rlmSet().value
        } else if let mixed = AnyRealmValue(wrapping: argument) {
            if case .object(let object) = mixed { return try self.value(object, as: type, linkingTo: target, argument: index, position: position) }
            value = mixed._rlmSet().value
        } else if let number = argument as? NSNumber {
            value = .double(number.doubleValue)
        } else {
            throw QueryError(position: position, reason: "\(what) is a \(Swift.type(of: argument)), which no property holds")
        }
        guard let valueType = columnType(of: value) else { return value }
        guard QueryBinder.comparable(type, valueType) else {
            throw QueryError(position: position, reason: "\(what) is \(article(valueType)); the property holds \(QueryBinder.typeName(type))")
        }
        return value
    }

    /// A string written in the predicate, compared with values of `type`: besides strings it
    /// may spell an ObjectId, a UUID or a decimal number for properties of those types.
    static func literal(_ text: String, as type: ColumnType, position: Int) throws(QueryError) -> Value {
        switch type {
        case .string, .mixed: return .string(text)
        case .binary: return .binary(Array(text.utf8))
        case .objectId:
            guard let id = try? ObjectId(string: text) else {
                throw QueryError(position: position, reason: "'\(text)' is not an ObjectId (24 hexadecimal digits)")
            }
            return id._rlmSet().value
        case .uuid:
            guard let uuid = UUID(uuidString: text) else { throw QueryError(position: position, reason: "'\(text)' is not a UUID") }
            return uuid._rlmSet().value
        case .decimal:
            guard let decimal = try? Decimal128(string: text) else {
                throw QueryError(position: position, reason: "'\(text)' is not a decimal number")
            }
            return decimal._rlmSet().value
        default:
            throw QueryError(position: position, reason: "'\(text)' is a string; the property holds \(QueryBinder.typeName(type))")
        }
    }

    static func columnType(of value: Value) -> ColumnType? {
        switch value {
        case .null: return nil
        case .int: return .int
        case .bool: return .bool
        case .float: return .float
        case .double: return .double
        case .string: return .string
        case .binary: return .binary
        case .timestamp: return .timestamp
        case .link, .typedLink: return .link
        case .decimal: return .decimal
        case .objectId: return .objectId
        case .uuid: return .uuid
        }
    }

    private static func article(_ type: ColumnType) -> String {
        switch type {
        case .int: return "an integer"
        case .bool: return "a boolean"
        case .float, .double: return "a number"
        case .string: return "a string"
        case .binary: return "data"
        case .timestamp: return "a date"
        case .link: return "an object"
        case .decimal: return "a decimal"
        case .objectId: return "an ObjectId"
        case .uuid: return "a UUID"
        case .mixed: return "a mixed value"
        }
    }

    private static func describe(_ value: Any) -> String {
        let text = value is String ? "'\(value)'" : "\(value)"
        return text.count > 40 ? String(text.prefix(37)) + "…" : text
    }
}
