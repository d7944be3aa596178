import Foundation
import OpenRealm

/// Where an object is, as the web view's URLs say it: its class and either its primary key
/// (as text, the way the page shows it) or, for a class without one (or an object whose
/// optional primary key is nil), its key in the table.
struct ObjectAddress: Sendable, Hashable {
    enum Identity: Sendable, Hashable {
        case primaryKey(String)
        case key(Int64)
    }

    var className: String
    var identity: Identity

    /// The query parameter that names the object: `pk=…` or `key=…`.
    var parameter: (String, String) {
        switch identity {
        case .primaryKey(let text): ("pk", text)
        case .key(let key): ("key", String(key))
        }
    }

    /// How a page names the object: `Dog 7`, `Dog "Rex"`, `Toy #12` (by key).
    var label: String {
        switch identity {
        case .primaryKey(let text): className + " " + (Self.quotesKey(text) ? "\"\(text)\"" : text)
        case .key(let key): "\(className) #\(key)"
        }
    }

    private static func quotesKey(_ text: String) -> Bool {
        Int(text) == nil
    }

    /// The address of a managed object.
    init(of object: DynamicObject) {
        let schema = object.objectSchema
        className = schema.className
        if let primaryKey = schema.primaryKeyProperty, let text = Self.primaryKeyText(object[primaryKey.name]) {
            identity = .primaryKey(text)
        } else {
            identity = .key(object.objectKeyValue)
        }
    }

    /// The address a request names: class `className` and the `pk` or `key` parameter.
    ///
    /// - Throws: `PageError` 400 when neither is given or `key` is not a number.
    init(className: String, parameters: [String: String]) throws(PageError) {
        self.className = className
        if let key = parameters["key"] {
            guard let value = Int64(key) else {
                throw PageError(.badRequest, "Bad object key", "The object key '\(key)' is not a whole number.")
            }
            identity = .key(value)
        } else if let text = parameters["pk"] {
            identity = .primaryKey(text)
        } else {
            throw PageError(.badRequest, "No object named", "Name the object with ?pk=<primary key> or ?key=<object key>.")
        }
    }

    /// The object at this address in `realm`.
    ///
    /// - Throws: `PageError` 404 for an unknown class or no such object, 400 for a primary key
    ///   that is not of the class's primary key type (or a class without one).
    func resolve(in realm: Realm) throws(PageError) -> DynamicObject {
        let schema = try Reading.objectSchema(className, in: realm)
        let found: DynamicObject?
        do {
            switch identity {
            case .key(let key):
                found = try realm.dynamicObject(ofType: className, objectKey: key)
            case .primaryKey(let text):
                guard let property = schema.primaryKeyProperty else {
                    throw PageError(.badRequest, "No primary key", "Class \(className) has no primary key: name its objects with ?key=<object key>.")
                }
                found = try realm.dynamicObject(ofType: className, forPrimaryKey: try Self.primaryKeyValue(text, of: property, className))
            }
        } catch let error as PageError {
            throw error
        } catch {
            throw PageError(.badRequest, "Bad object", (error as? Realm.Error)?.message ?? "\(error)")
        }
        guard let found else {
            throw PageError(.notFound, "No such object", "There is no \(label) in the file.")
        }
        return found
    }

    /// The primary key `text` names, as a value of `property`'s type.
    private static func primaryKeyValue(_ text: String, of property: PropertySchema, _ className: String) throws(PageError) -> Any {
        let value: Any?
        switch property.type {
        case .int: value = Int(text)
        case .string: value = text
        case .objectId: value = try? ObjectId(string: text)
        case .UUID: value = UUID(uuidString: text)
        default: value = nil
        }
        guard let value else {
            throw PageError(.badRequest, "Bad primary key", "'\(text)' is not a primary key of \(className): its primary key \(property.name) is \(property.typeName).")
        }
        return value
    }

    /// A primary key value as text, the way `primaryKeyValue` reads it back; nil for nil.
    private static func primaryKeyText(_ value: Any?) -> String? {
        switch value {
        case let value as Int: String(value)
        case let value as String: value
        case let value as ObjectId: value.stringValue
        case let value as UUID: value.uuidString
        default: nil
        }
    }
}
