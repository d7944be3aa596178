import DynamicReading
import Foundation
import OpenRealm

/// What is wrong with one value of a record, said without where (the importer adds the line
/// or record and the property).
struct RecordProblem: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Reads the JSON values RecordEncoder writes (its table says the forms) back into the values
/// `dynamicCreate` and `DynamicObject`'s subscript take, checking each against the property's
/// type first: a value that does not fit is a `RecordProblem` here, never a trap, and never
/// a write that fails at its end without saying which record was wrong.
final class RecordDecoder {
    let realm: Realm
    /// Objects of classes without a primary key made by this import, by class and by the
    /// `@key` their records carried: links to them name those keys.
    var keyed: [String: [Int: DynamicObject]] = [:]

    init(realm: Realm) {
        self.realm = realm
    }

    /// Whether `property` is set once every object exists: links, and mixed values (which may
    /// hold one).
    static func isDeferred(_ property: PropertySchema) -> Bool {
        property.type == .object || property.type == .any
    }

    /// The value of `property` that `json` gives.
    func value(_ json: JSONValue, for property: PropertySchema) throws(RecordProblem) -> Any? {
        guard DynamicValue.isCollection(property) else {
            return try element(json, type: property.type, optional: property.isOptional || property.type == .object, target: property.objectClassName)
        }
        // A map of links holds nil; a list or set of them does not.
        let optional = property.isOptional || (property.isMap && property.type == .object)
        if property.isMap {
            guard case .object(let entries) = json else { throw RecordProblem("a map is a JSON object; this is \(json.kind)") }
            var map: [String: Any?] = [:]
            for entry in entries {
                map[entry.key] = try element(entry.value, type: property.type, optional: optional, target: property.objectClassName)
            }
            return map
        }
        guard case .array(let values) = json else {
            throw RecordProblem("a \(property.isSet ? "set" : "list") is a JSON array; this is \(json.kind)")
        }
        var elements: [Any?] = []
        for value in values {
            elements.append(try element(value, type: property.type, optional: optional, target: property.objectClassName))
        }
        return elements
    }

    /// One value of type `type`; `target` the class a link leads to.
    private func element(_ json: JSONValue, type: PropertyType, optional: Bool, target: String?) throws(RecordProblem) -> Any? {
        if case .null = json {
            if type == .any { return AnyRealmValue.none }
            guard optional else { throw RecordProblem("null, but the property is not optional") }
            return nil
        }
        switch type {
        case .any: return try mixed(json)
        case .object:
            guard let target else { throw RecordProblem("a link without a class") }
            return try link(json, to: target)
        default: return try Self.scalar(json, type: type)
        }
    }

    /// A value of a type that is neither a link nor mixed.
    static func scalar(_ json: JSONValue, type: PropertyType) throws(RecordProblem) -> Any {
        func mismatch(_ expected: String) -> RecordProblem {
            RecordProblem("expected \(expected), found \(json.kind) \(json.text.prefix(40))")
        }
        switch (type, json) {
        case (.int, .int(let value)): return value
        case (.bool, .bool(let value)): return value
        case (.float, _): return Float(try number(json, mismatch("a number")))
        case (.double, _): return try number(json, mismatch("a number"))
        case (.string, .string(let value)): return value
        case (.data, .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw RecordProblem("expected base64 data, found \"\(text.prefix(40))\"") }
            return data
        case (.date, .string(let text)):
            guard let date = DateText.parse(text) else { throw RecordProblem("expected an ISO 8601 date (2026-11-29T18:31:23.250000Z), found \"\(text.prefix(40))\"") }
            return date
        case (.decimal128, .string(let text)):
            guard let value = try? Decimal128(string: text) else { throw RecordProblem("expected a decimal, found \"\(text.prefix(40))\"") }
            return value
        case (.decimal128, .int), (.decimal128, .double):
            guard let value = try? Decimal128(string: json.text) else { throw mismatch("a decimal") }
            return value
        case (.objectId, .string(let text)):
            guard let value = try? ObjectId(string: text) else { throw RecordProblem("expected an ObjectId (24 hexadecimal digits), found \"\(text.prefix(40))\"") }
            return value
        case (.UUID, .string(let text)):
            guard let value = UUID(uuidString: text) else { throw RecordProblem("expected a UUID, found \"\(text.prefix(40))\"") }
            return value
        case (.int, _): throw mismatch("an integer")
        case (.bool, _): throw mismatch("true or false")
        default: throw mismatch("a string (\(type))")
        }
    }

    /// A number, or the strings RecordEncoder writes for infinities and NaN.
    private static func number(_ json: JSONValue, _ mismatch: RecordProblem) throws(RecordProblem) -> Double {
        switch json {
        case .int(let value): return Double(value)
        case .double(let value): return value
        case .float(let value): return Double(value)
        case .string("NaN"): return .nan
        case .string("Infinity"): return .infinity
        case .string("-Infinity"): return -.infinity
        default: throw mismatch
        }
    }

    /// A mixed value: `{"type": "int", "value": 3}`.
    private func mixed(_ json: JSONValue) throws(RecordProblem) -> AnyRealmValue {
        guard case .object = json, case .string(let tag)? = json["type"], let inner = json["value"] else {
            throw RecordProblem("a mixed value is null or {\"type\": …, \"value\": …}; this is \(json.kind)")
        }
        if tag == "object" {
            guard case .string(let className)? = json["class"] else { throw RecordProblem("a mixed link names its class: {\"type\": \"object\", \"class\": …}") }
            return .object(try link(inner, to: className))
        }
        guard let type = Self.mixedTypes[tag] else {
            throw RecordProblem("unknown mixed type '\(tag)' (\(Self.mixedTypes.keys.sorted().joined(separator: ", ")), object)")
        }
        switch try Self.scalar(inner, type: type) {
        case let value as Int: return .int(value)
        case let value as Bool: return .bool(value)
        case let value as Float: return .float(value)
        case let value as Double: return .double(value)
        case let value as String: return .string(value)
        case let value as Data: return .data(value)
        case let value as Date: return .date(value)
        case let value as Decimal128: return .decimal128(value)
        case let value as ObjectId: return .objectId(value)
        case let value as UUID: return .uuid(value)
        default: throw RecordProblem("a mixed value of type '\(tag)' that cannot be read")
        }
    }

    /// The type tags of mixed values that are not links (RecordEncoder.tag writes them).
    private static let mixedTypes: [String: PropertyType] = [
        "int": .int, "bool": .bool, "float": .float, "double": .double, "string": .string, "data": .data, "date": .date,
        "decimal128": .decimal128, "objectId": .objectId, "uuid": .UUID,
    ]

    /// The object a link names: by primary key, or by the `@key` an object of a class without
    /// one had in this import's input.
    private func link(_ json: JSONValue, to className: String) throws(RecordProblem) -> DynamicObject {
        guard let schema = realm.schema[className] else { throw RecordProblem("a link to class \(className), which the file does not have") }
        if let primaryKey = schema.primaryKeyProperty {
            let key = try Self.scalar(json, type: primaryKey.type)
            let found: DynamicObject?
            do {
                found = try realm.dynamicObject(ofType: className, forPrimaryKey: key)
            } catch {
                throw RecordProblem(error.message)
            }
            guard let found else { throw RecordProblem("a link to \(className) \(json.text), which is neither in the input nor in the file") }
            return found
        }
        guard case .int(let key) = json else {
            throw RecordProblem("a link to \(className), which has no primary key, is the @key of an object in the input (a number)")
        }
        guard let found = keyed[className]?[key] else {
            throw RecordProblem("a link to \(className) @key \(key), which is not in the input")
        }
        return found
    }
}
