import DynamicReading
import Foundation
import OpenRealm

// Reading values of any class through the dynamic API, for the pages (as markup) and for the
// history stream (as text). Names always come from `realm.schema`: a `DynamicObject`'s
// subscript traps on a name its class lacks, and names in requests come from users.
//
// What the subscript gives (DynamicObject.swift) and how it shows:
//
//   | value                          | text                     | page                             |
//   |--------------------------------|--------------------------|----------------------------------|
//   | nil, AnyRealmValue.none        | null                     | null, dimmed                     |
//   | String                         | itself                   | itself, cut to 80 characters in tables |
//   | Int, Bool, Float, Double, Decimal128, ObjectId | description | the same                     |
//   | UUID                           | uuidString               | the same                         |
//   | Date                           | ISO 8601, UTC, with ms   | the same                         |
//   | Data                           | "N bytes: 0a1b…"         | the same                         |
//   | DynamicObject (a link)         | its label (Dog 7)        | a link to its page               |
//   | List / MutableSet / Map        | "N elements: a, b, …"    | a link to the collection's page, with the count |

enum Reading {
    /// The class named `className` in the file.
    ///
    /// - Throws: `PageError` 404 naming the classes there are.
    static func objectSchema(_ className: String, in realm: Realm) throws(PageError) -> ObjectSchema {
        guard let schema = realm.schema[className] else {
            let known = realm.schema.objectSchema.map(\.className).sorted().joined(separator: ", ")
            throw PageError(.notFound, "No such class", "The file has no class '\(className)'. It has: \(known.isEmpty ? "none" : known).")
        }
        return schema
    }

    /// Whether `property` is a list, a set or a map.
    static func isCollection(_ property: PropertySchema) -> Bool {
        DynamicValue.isCollection(property)
    }

    // MARK: Values as text

    /// `value` of a property that is not a collection, as text (the history stream's form).
    static func text(_ value: Any?) -> String {
        guard let value = unwrapped(value) else { return "null" }
        switch value {
        case let string as String: return string
        case let object as DynamicObject: return object.isInvalidated ? "(deleted object)" : ObjectAddress(of: object).label
        case let mixed as AnyRealmValue: return text(mixedValue(mixed))
        case let date as Date: return date.formatted(Self.dateStyle)
        case let data as Data: return dataText(data)
        case let uuid as UUID: return uuid.uuidString
        default: return String(describing: value)
        }
    }

    /// A property's value as text, a collection as its count and first elements.
    static func text(of object: DynamicObject, _ property: PropertySchema) -> String {
        let value = object[property.name]
        guard isCollection(property) else { return text(value) }
        let count = DynamicValue.count(value)
        let shown = DynamicValue.elements(value, from: 0, count: 20).map { element in
            (element.key.map { $0 + ": " } ?? "") + text(element.value)
        }
        let more = count > shown.count ? ", …" : ""
        return "\(count) element\(count == 1 ? "" : "s")" + (shown.isEmpty ? "" : ": " + shown.joined(separator: ", ") + more)
    }

    static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func dataText(_ data: Data) -> String {
        let hex = data.prefix(32).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        return "\(data.count) byte\(data.count == 1 ? "" : "s")" + (data.isEmpty ? "" : ": " + hex + (data.count > 32 ? "…" : ""))
    }

    /// What a mixed value holds, as the subscript gives other values (nil for `.none`).
    static func mixedValue(_ value: AnyRealmValue) -> Any? {
        DynamicValue.mixedValue(value)
    }

    /// `value` without the optionals around it (DynamicReading).
    static func unwrapped(_ value: Any?) -> Any? {
        DynamicValue.unwrapped(value)
    }

    // MARK: Values as markup

    /// `value` of a property that is not a collection, for a page: links to the objects it
    /// names, strings cut to `limit` characters when one is given.
    static func html(_ value: Any?, limit: Int? = nil) -> HTML {
        guard let value = unwrapped(value) else { return "<span class=\"null\">null</span>" }
        switch value {
        case let object as DynamicObject:
            guard !object.isInvalidated else { return "<span class=\"null\">(deleted object)</span>" }
            let address = ObjectAddress(of: object)
            return "<a class=\"link\" href=\"\(Link.object(address))\">\(address.label)</a>"
        case let mixed as AnyRealmValue:
            return html(mixedValue(mixed), limit: limit)
        default:
            let text = text(value)
            if let limit, text.count > limit {
                return "<span title=\"\(text)\">\(String(text.prefix(limit)))…</span>"
            }
            return "\(text)"
        }
    }

    /// A collection property of `object` for a table cell: its type and count, linking to its page.
    static func collectionHTML(of object: DynamicObject, _ property: PropertySchema) -> HTML {
        let count = DynamicValue.count(object[property.name])
        let link = Link.collection(ObjectAddress(of: object), property.name)
        return "<a class=\"collection\" href=\"\(link)\">\(property.typeName) · \(count)</a>"
    }
}
