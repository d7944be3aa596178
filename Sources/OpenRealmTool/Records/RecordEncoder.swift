import DynamicReading
import Foundation
import OpenRealm

// Objects of any class as JSON values: what export writes (json, ndjson, csv) and query
// prints. RecordDecoder reads the same forms back:
//
//   | property type        | JSON                                                        |
//   |----------------------|-------------------------------------------------------------|
//   | Int, Bool            | number, true/false                                          |
//   | Float, Double        | number; "NaN", "Infinity", "-Infinity" as strings           |
//   | String               | string                                                      |
//   | Data                 | base64 string                                               |
//   | Date                 | "2026-11-29T18:31:23.250000Z" (DateText.swift)              |
//   | Decimal128, ObjectId, UUID | their text: "12.5", 24 hex digits, "E621E1F8-…"       |
//   | AnyRealmValue        | {"type": "int", "value": 3}; a link {"type": "object", "class": "Dog", "value": <link>}; null |
//   | optional, nil        | null                                                        |
//   | link                 | the target's primary key; for a class without one, its object key (a number) |
//   | List, MutableSet     | array (a set's elements in the order of their JSON text)    |
//   | Map                  | object, keys in order                                       |
//
// An object of a class without a primary key carries its object key as `@key`, so that
// links to it find it again after an import.

/// Writes objects of any class as JSON values.
struct RecordEncoder {
    /// The field holding the object key of an object of a class without a primary key.
    static let keyField = "@key"
    /// The field naming the class of an ndjson record.
    static let classField = "@class"

    /// The fields of `object`, of class `schema`: `@key` for a class without a primary key,
    /// then the properties in the file's order.
    func fields(of object: DynamicObject, _ schema: ObjectSchema) -> [(key: String, value: JSONValue)] {
        var fields: [(key: String, value: JSONValue)] = []
        if schema.primaryKeyProperty == nil { fields.append((Self.keyField, .int(Int(object.objectKeyValue)))) }
        for property in schema.properties {
            fields.append((property.name, value(object[property.name], property)))
        }
        return fields
    }

    /// The value of `property` (a collection as an array or object).
    func value(_ value: Any?, _ property: PropertySchema) -> JSONValue {
        guard DynamicValue.isCollection(property) else { return scalar(value) }
        let elements = DynamicValue.elements(value)
        if property.isMap {
            return .object(elements.map { (key: $0.key ?? "", value: scalar($0.value)) }.sorted { $0.key < $1.key })
        }
        let values = elements.map { scalar($0.value) }
        // A set has no order: its elements are written in one that does not depend on the file.
        return .array(property.isSet ? values.sorted { $0.text < $1.text } : values)
    }

    /// A value that is not a collection.
    func scalar(_ value: Any?) -> JSONValue {
        guard let value = DynamicValue.unwrapped(value) else { return .null }
        switch value {
        case let value as Bool: return .bool(value)
        case let value as Int: return .int(value)
        case let value as Float: return value.isFinite ? .float(value) : .string(Self.nonFinite(Double(value)))
        case let value as Double: return value.isFinite ? .double(value) : .string(Self.nonFinite(value))
        case let value as String: return .string(value)
        case let value as Data: return .string(value.base64EncodedString())
        case let value as Date: return .string(DateText.string(value))
        case let value as Decimal128: return .string(value.stringValue)
        case let value as ObjectId: return .string(value.stringValue)
        case let value as UUID: return .string(value.uuidString)
        case let object as DynamicObject: return link(object)
        case let mixed as AnyRealmValue: return self.mixed(mixed)
        default: return .string(String(describing: value))
        }
    }

    /// A link: the target's primary key, or its object key for a class without one.
    func link(_ object: DynamicObject) -> JSONValue {
        guard !object.isInvalidated else { return .null }
        if let primaryKey = object.objectSchema.primaryKeyProperty { return scalar(object[primaryKey.name]) }
        return .int(Int(object.objectKeyValue))
    }

    /// A mixed value with its type: `{"type": "int", "value": 3}`.
    func mixed(_ value: AnyRealmValue) -> JSONValue {
        guard let inner = DynamicValue.mixedValue(value) else { return .null }
        var fields: [(key: String, value: JSONValue)] = [("type", .string(Self.tag(value)))]
        if let object = inner as? DynamicObject { fields.append(("class", .string(object.objectSchema.className))) }
        fields.append(("value", scalar(inner)))
        return .object(fields)
    }

    /// The type tag of a mixed value (RecordDecoder reads the same).
    static func tag(_ value: AnyRealmValue) -> String {
        switch value {
        case .none: "null"
        case .int: "int"
        case .bool: "bool"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .object: "object"
        case .objectId: "objectId"
        case .decimal128: "decimal128"
        case .uuid: "uuid"
        }
    }

    static func nonFinite(_ value: Double) -> String {
        value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity"
    }
}
