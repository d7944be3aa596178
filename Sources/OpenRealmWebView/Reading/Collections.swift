import OpenRealm

// The lists, sets and maps of any class, whatever their element type. A `DynamicObject`'s
// subscript gives a `List<T>`, `MutableSet<T>` or `Map<String, T>` typed by its elements
// (`DynamicObject` for links, `T?` for optional elements) inside an `Any`; lists and sets are
// random-access collections, opened here as such, and maps are read through `MapEntries`.

enum Collections {
    /// The number of elements of a list, set or map (0 for anything else).
    static func count(_ value: Any?) -> Int {
        if let map = value as? any MapEntries { return map.entryCount }
        if let collection = value as? any Collection { return collection.count }
        return 0
    }

    /// Elements `from ..< from + count` of a list, set or map: a map's with their keys.
    static func elements(_ value: Any?, from: Int, count: Int) -> [(key: String?, value: Any?)] {
        if let map = value as? any MapEntries { return map.entries(from: from, count: count) }
        if let collection = value as? any Collection { return slice(collection, from: from, count: count) }
        return []
    }

    private static func slice<C: Collection>(_ collection: C, from: Int, count: Int) -> [(key: String?, value: Any?)] {
        collection.dropFirst(from).prefix(count).map { (key: nil, value: Reading.unwrapped($0)) }
    }
}

/// A map's entries without knowing its value type.
protocol MapEntries {
    var entryCount: Int { get }
    func entries(from: Int, count: Int) -> [(key: String?, value: Any?)]
}

extension Map: MapEntries where Key == String {
    var entryCount: Int { count }

    func entries(from: Int, count: Int) -> [(key: String?, value: Any?)] {
        asKeyValueSequence().dropFirst(from).prefix(count).map { (key: $0.key, value: Reading.unwrapped($0.value)) }
    }
}
