import RealmStorage

/// A dictionary from strings to values or objects, persisted as one property:
/// `@Persisted var scores: Map<String, Int>`.
///
/// Unmanaged, it is a plain dictionary. Managed, it is a live view of the map in the realm:
/// reads go to the current version and changes need a write transaction. Stored as two
/// lists (keys and values); keys keep their insertion order.
/// The key types of `Map` (String).
public protocol _MapKey: Hashable {
    var _rlmKeyString: String { get }
    init(_rlmKeyString: String)
}

extension String: _MapKey {
    public var _rlmKeyString: String { self }
    public init(_rlmKeyString: String) { self = _rlmKeyString }
}

public final class Map<Key: _MapKey, Value: _Persistable>: CustomStringConvertible {
    var entries: [(key: Key, value: Value)]
    let owner: ObjectBase?
    let property: Int

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

    public var realm: Realm? { owner?.realm }

    private var current: [(key: Key, value: Value)] {
        guard let owner else { return entries }
        let keysIndex = owner.schema.properties[property].mapKeysIndex!
        let keys = owner.readList(keysIndex)
        let values = owner.readList(property)
        return zip(keys, values).map { key, value in
            (key: Key(_rlmKeyString: { if case .string(let s) = key { return s } else { return "" } }()),
             value: Value._rlmGet(_StoredValue(value, realm: owner.realm)))
        }
    }

    public var count: Int { owner.map { $0.readList(property).count } ?? entries.count }
    public var isEmpty: Bool { count == 0 }
    public var keys: [Key] { current.map(\.key) }
    public var values: [Value] { current.map(\.value) }
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

    public func removeObject(for key: Key) { self[key] = nil }

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
        let keysIndex = owner.schema.properties[property].mapKeysIndex!
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
