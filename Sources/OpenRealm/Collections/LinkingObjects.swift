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
    public let realm: Realm?
    private let binding: TableBinding?
    private let keys: [ObjectKey]

    public init() {
        realm = nil
        binding = nil
        keys = []
    }

    init(realm: Realm, binding: TableBinding, keys: [ObjectKey]) {
        self.realm = realm
        self.binding = binding
        self.keys = keys
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }

    public subscript(position: Int) -> Element {
        guard let realm, let binding else { misuse("Index \(position) is out of bounds (must be less than 0)") }
        return realm.materialize(Element.self, binding, keys[position])
    }

    /// The keys of the linking objects, ascending.
    var objectKeys: [ObjectKey] { keys }

    public var description: String { "LinkingObjects<\(Element.className())> (\(keys.count) objects)" }
}

extension LinkingObjects: _LinkingObjectsProtocol {
    public static var _rlmKind: _PropertyKind {
        _PropertyKind(.link, "LinkingObjects<\(Element.className())>", linkTarget: Element.self, isComputed: true)
    }
    public static func _rlmDefault() -> LinkingObjects<Element> { LinkingObjects() }

    public static func _rlmGet(_ stored: _StoredValue) -> LinkingObjects<Element> {
        guard let (owner, property) = stored.list else { return LinkingObjects() }
        let realm = owner.realm
        let origin = owner.schema.properties[property].originProperty ?? ""
        do {
            guard let binding = try realm.binding(for: Element.self) else { return LinkingObjects() }
            guard let originProperty = binding.schema.property(named: origin), originProperty.type == .link,
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
            return LinkingObjects(realm: realm, binding: binding, keys: keys)
        } catch {
            misuse("\(error)")
        }
    }

    public func _rlmSet() -> _StoredValue { _StoredValue(.null) }
}
