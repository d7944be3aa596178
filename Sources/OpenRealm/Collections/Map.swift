import RealmStorage

/// The key types of `Map` (String; an implementation detail).
public protocol _MapKey: Hashable {
    /// An implementation detail: the key as stored.
    var _rlmKeyString: String { get }
    /// An implementation detail: the key from its stored form.
    init(_rlmKeyString: String)
}

extension String: _MapKey {
    public var _rlmKeyString: String { self }
    public init(_rlmKeyString: String) { self = _rlmKeyString }
}

/// A dictionary from strings to values or objects, persisted as one property:
/// `@Persisted var scores: Map<String, Int>`.
///
/// Unmanaged, it is a plain dictionary. Managed, it is a live view of the map in the realm:
/// reads go to the current version and changes need a write transaction. Stored as two
/// lists (keys and values); keys keep their insertion order.
///
/// ```swift
/// class Player: Object {
///     @Persisted var name: String
///     @Persisted var scores: Map<String, Int>
/// }
/// try realm.write {
///     player.scores["level1"] = 120
///     player.scores["level2"] = 80
///     player.scores["level1"] = nil      // removes the entry
/// }
/// let best = player.scores.values.max()  // 80
/// for (level, score) in player.scores.asKeyValueSequence() { print(level, score) }
/// ```
///
/// Lookups and changes take time linear in the number of entries: a change on a managed
/// map rewrites both lists.
public final class Map<Key: _MapKey, Value: _Persistable>: CustomStringConvertible {
    var entries: [(key: Key, value: Value)]
    let owner: ObjectBase?
    let property: Int

    /// An empty, unmanaged map.
    public init() {
        entries = []
        owner = nil
        property = 0
    }

    init(owner: ObjectBase, property: Int) {
        entries = []
        self.owner = owner
        self.property = property
    }

    /// The realm of the object that holds the map; nil while the map is unmanaged.
    public var realm: Realm? { owner?.realm }

    private var current: [(key: Key, value: Value)] {
        guard let owner else { return entries }
        let keysIndex = owner.schema.allProperties[property].mapKeysIndex!
        let keys = owner.readList(keysIndex)
        let values = owner.readList(property)
        return zip(keys, values).map { key, value in
            (key: Key(_rlmKeyString: { if case .string(let s) = key { return s } else { return "" } }()),
             value: Value._rlmGet(owner.storedElement(value, of: property)))
        }
    }

    /// The number of entries.
    public var count: Int { owner.map { $0.readList(property).count } ?? entries.count }
    /// Whether the map has no entries.
    public var isEmpty: Bool { count == 0 }
    /// The keys, in insertion order.
    public var keys: [Key] { current.map(\.key) }
    /// The values, in the order of their keys.
    public var values: [Value] { current.map(\.value) }
    /// The value type and the entries, for debugging.
    public var description: String { "Map<String, \(Value._rlmKind.name)> \(current.map { "\($0.key): \($0.value)" })" }

    /// The value for `key`; setting nil removes the entry.
    public subscript(key: Key) -> Value? {
        get { current.first { $0.key == key }?.value }
        set {
            modify { entries in
                if let i = entries.firstIndex(where: { $0.key == key }) {
                    if let newValue { entries[i].value = newValue } else { entries.remove(at: i) }
                } else if let newValue {
                    entries.append((key, newValue))
                }
            }
        }
    }

    /// Removes the entry for `key`, if any (as setting `self[key] = nil`).
    public func removeObject(for key: Key) { self[key] = nil }

    /// Removes every entry (linked objects stay in the realm).
    public func removeAll() { modify { $0.removeAll() } }

    /// Every entry, in insertion order.
    public func asKeyValueSequence() -> [(key: Key, value: Value)] { current }

    private func modify(_ change: (inout [(key: Key, value: Value)]) -> Void) {
        guard let owner else {
            change(&entries)
            return
        }
        var values = current
        change(&values)
        let keysIndex = owner.schema.allProperties[property].mapKeysIndex!
        owner.writeList(keysIndex, values.map { _StoredValue(.string($0.key._rlmKeyString)) })
        owner.writeList(property, values.map { $0.value._rlmSet() })
    }
}

extension Map: _Persistable {
    public static var _rlmKind: _PropertyKind {
        _PropertyKind(Value._rlmKind.type, "Map<String, \(Value._rlmKind.name)>", linkTarget: Value._rlmKind.linkTarget, isList: true, isMap: true)
    }
    public static var _rlmIsOptional: Bool { Value._rlmIsOptional }
    public static func _rlmDefault() -> Map<Key, Value> { Map() }

    public static func _rlmGet(_ stored: _StoredValue) -> Map<Key, Value> {
        guard let (owner, property) = stored.list else { return Map() }
        return Map(owner: owner, property: property)
    }

    public func _rlmSet() -> _StoredValue {
        let entries = current
        return _StoredValue(.null, elements: entries.map { $0.value._rlmSet() }, mapKeys: entries.map(\.key._rlmKeyString))
    }
}

extension Map: UnmanagedCollectionConvertible {
    /// An unmanaged map of a `[String: Value]` dictionary's entries, in key order (a
    /// dictionary has no order of its own; `create(_:value:)`).
    static func converted(from value: Any, objects: LinkedObjectMaker) throws(ValueMismatch) -> Map<Key, Value> {
        guard let dictionary = value as? [String: Any?] else {
            throw ValueMismatch(detail: "expected a [String: \(Value._rlmKind.name)] dictionary")
        }
        let map = Map()
        for (key, entry) in dictionary.sorted(by: { $0.key < $1.key }) {
            do {
                map.entries.append((Key(_rlmKeyString: key), try ValueConversion.convert(entry, to: Value.self, objects: objects)))
            } catch {
                throw ValueMismatch(detail: "the value '\(ValueConversion.describe(entry))' for key '\(key)' is not of type \(Value._rlmKind.name)")
            }
        }
        return map
    }
}
