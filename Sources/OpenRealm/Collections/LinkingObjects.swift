import RealmStorage

/// Marks `LinkingObjects` for `@Persisted(originProperty:)` (an implementation detail).
public protocol _LinkingObjectsProtocol: _Persistable {}

/// The objects that link to an object through one property: the inverse of a link.
///
/// ```swift
/// class Person: Object {
///     @Persisted var dogs: List<Dog>
/// }
/// class Dog: Object {
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// ```
///
/// Computed when read, from the current version (a scan of the linking class's table); empty
/// while the object is unmanaged. Read-only.
public struct LinkingObjects<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    /// The realm of the object linked to; nil while it is unmanaged.
    public let realm: Realm?
    private let binding: TableBinding?
    private let keys: [ObjectKey]
    /// The object linked to and this property's index in its class (queries and
    /// notifications read the linking objects anew from them).
    let owner: ObjectBase?
    let property: Int

    /// An empty collection, as an unmanaged object's property holds.
    public init() {
        realm = nil
        binding = nil
        keys = []
        owner = nil
        property = 0
    }

    init(owner: ObjectBase, property: Int) {
        let (binding, keys) = Self.read(owner, property)
        self.realm = owner.realm
        self.binding = binding
        self.keys = keys
        self.owner = owner
        self.property = property
    }

    /// The position of the first object: 0.
    public var startIndex: Int { 0 }
    /// The position after the last object: the number of linking objects.
    public var endIndex: Int { keys.count }

    /// The linking object at `position`.
    public subscript(position: Int) -> Element {
        guard let realm, let binding else { misuse("Index \(position) is out of bounds (must be less than 0)") }
        return realm.materialize(Element.self, binding, keys[position])
    }

    /// The class and the number of objects, for debugging.
    public var description: String { "LinkingObjects<\(Element.className())> (\(keys.count) objects)" }
}

extension LinkingObjects: _LinkingObjectsProtocol {
    public static var _rlmKind: _PropertyKind {
        _PropertyKind(.link, "LinkingObjects<\(Element.className())>", linkTarget: Element.self, isComputed: true)
    }
    public static func _rlmDefault() -> LinkingObjects<Element> { LinkingObjects() }

    public static func _rlmGet(_ stored: _StoredValue) -> LinkingObjects<Element> {
        guard let (owner, property) = stored.list else { return LinkingObjects() }
        return LinkingObjects(owner: owner, property: property)
    }

    /// The objects linking to `owner` through its property `property`, at the realm's current
    /// state: a scan of the linking class's table.
    static func read(_ owner: ObjectBase, _ property: Int) -> (TableBinding?, [ObjectKey]) {
        let realm = owner.managedRealm
        owner.ensureValid(in: realm)
        let origin = owner.schema.allProperties[property].originProperty ?? ""
        do {
            guard let binding = try realm.binding(for: Element.self) else { return (nil, []) }
            guard let originProperty = binding.schema.property(named: origin), originProperty.columnType == .link,
                  originProperty.linkTarget?.className() == owner.schema.className else {
                misuse("Property '\(Element.className()).\(origin)' declared as origin of linking objects does not link to '\(owner.schema.className)'")
            }
            let column = binding.columns[originProperty.index]
            var keys: [ObjectKey] = []
            try engine { () throws(StorageError) in
                try realm.tableView(binding.table).forEachRow { (row) throws(StorageError) -> Bool in
                    if originProperty.isList {
                        if try row.list(column).contains(.link(owner.key)) { keys.append(row.key) }
                    } else if try row.value(column) == .link(owner.key) {
                        keys.append(row.key)
                    }
                    return true
                }
            }
            return (binding, keys)
        } catch {
            misuse("\(error)")
        }
    }

    /// The linking objects read anew (for queries, which follow the realm's changes).
    var currentKeys: [ObjectKey] {
        guard let owner else { return keys }
        return Self.read(owner, property).1
    }

    public func _rlmSet() -> _StoredValue { _StoredValue(.null) }
}
