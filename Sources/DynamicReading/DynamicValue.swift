import OpenRealm

// What `DynamicObject`'s subscript gives, opened whatever its type, for code that shows or
// writes out objects of any class: the web view's pages and the openrealm tool's query and
// export. A value comes as DynamicObject.swift's table says: a scalar, nil, an
// `AnyRealmValue` for a mixed property, a `DynamicObject` for a link, and a live `List<T>`,
// `MutableSet<T>` or `Map<String, T>` typed by its elements (`DynamicObject` for links,
// `T?` for optional elements) inside an `Any`. Lists and sets are random-access collections,
// opened here as such; maps are read through `MapEntries`.

package enum DynamicValue {
    /// `value` without the optionals around it (a `String?` element of a list reads as
    /// `Optional<String>` inside an `Any`), and nil for `AnyRealmValue.none`.
    package static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if let optional = value as? any OptionalValue { return unwrapped(optional.wrappedAny) }
        if let mixed = value as? AnyRealmValue, case .none = mixed { return nil }
        return value
    }

    /// What a mixed value holds, as the subscript gives other values (nil for `.none`).
    package static func mixedValue(_ value: AnyRealmValue) -> Any? {
        switch value {
        case .none: nil
        case .int(let value): value
        case .bool(let value): value
        case .float(let value): value
        case .double(let value): value
        case .string(let value): value
        case .data(let value): value
        case .date(let value): value
        case .object(let value): value
        case .objectId(let value): value
        case .decimal128(let value): value
        case .uuid(let value): value
        }
    }

    /// Whether `property` is a list, a set or a map.
    package static func isCollection(_ property: PropertySchema) -> Bool {
        property.isArray || property.isSet || property.isMap
    }

    /// The number of elements of a list, set or map (0 for anything else).
    package static func count(_ value: Any?) -> Int {
        if let map = value as? any MapEntries { return map.entryCount }
        if let collection = value as? any Collection { return collection.count }
        return 0
    }

    /// Elements `from ..< from + count` of a list, set or map, unwrapped: a map's with their keys.
    package static func elements(_ value: Any?, from: Int = 0, count: Int = .max) -> [(key: String?, value: Any?)] {
        if let map = value as? any MapEntries { return map.entries(from: from, count: count) }
        if let collection = value as? any Collection { return slice(collection, from: from, count: count) }
        return []
    }

    private static func slice<C: Collection>(_ collection: C, from: Int, count: Int) -> [(key: String?, value: Any?)] {
        collection.dropFirst(from).prefix(count).map { (key: nil, value: unwrapped($0)) }
    }
}

/// Any `Optional`, whatever it wraps.
package protocol OptionalValue {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalValue {
    package var wrappedAny: Any? { self.map { $0 as Any } }
}

/// A map's entries without knowing its value type.
package protocol MapEntries {
    var entryCount: Int { get }
    func entries(from: Int, count: Int) -> [(key: String?, value: Any?)]
}

extension Map: MapEntries where Key == String {
    package var entryCount: Int { count }

    package func entries(from: Int, count: Int) -> [(key: String?, value: Any?)] {
        asKeyValueSequence().dropFirst(from).prefix(count).map { (key: $0.key, value: DynamicValue.unwrapped($0.value)) }
    }
}
