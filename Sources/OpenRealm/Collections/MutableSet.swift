import RealmStorage

/// An unordered collection of distinct values or objects, persisted as one property:
/// `@Persisted var tags: MutableSet<String>`.
///
/// Unmanaged, it is a plain collection. Managed, it is a live view of the set in the realm:
/// reads go to the current version and changes need a write transaction. Iteration order is
/// insertion order (not meaningful, but stable).
///
/// ```swift
/// class Article: Object {
///     @Persisted var title: String
///     @Persisted var tags: MutableSet<String>
/// }
/// try realm.write {
///     article.tags.insert(objectsIn: ["swift", "server", "swift"])   // two elements
///     article.tags.remove("server")
/// }
/// let tagged = realm.objects(Article.self).where { $0.tags.contains("swift") }
/// ```
///
/// Membership tests and changes take time linear in the number of elements: a change on a
/// managed set rewrites the whole set.
public final class MutableSet<Element: _Persistable & Hashable>: RandomAccessCollection, CustomStringConvertible {
    var storage: ListStorage<Element>

    /// An empty, unmanaged set.
    public init() { storage = ListStorage() }

    init(owner: ObjectBase, property: Int) { storage = ListStorage(owner: owner, property: property) }

    /// The realm of the object that holds the set; nil while the set is unmanaged.
    public var realm: Realm? { storage.owner?.realm }

    /// The position of the first element: 0.
    public var startIndex: Int { 0 }
    /// The position after the last element: the number of elements.
    public var endIndex: Int { storage.count }
    /// The element at `position`, in insertion order.
    public subscript(position: Int) -> Element { storage.element(position) }
    /// The element type and the elements, for debugging.
    public var description: String { "MutableSet<\(Element._rlmKind.name)> \(storage.current)" }

    /// Whether the set holds `element` (objects compare as `Object.==` does: the same object in
    /// the same realm).
    public func contains(_ element: Element) -> Bool { storage.current.contains(element) }

    /// Adds `element` unless the set already holds it. On a managed set, call it in a write
    /// transaction; an unmanaged object is added to the realm, as for links.
    ///
    /// ```swift
    /// try realm.write {
    ///     person.tags.insert("admin")
    ///     person.tags.insert("admin")   // no effect: already there
    /// }
    /// ```
    public func insert(_ element: Element) {
        storage.modify { if !$0.contains(element) { $0.append(element) } }
    }

    /// Adds each of `elements` the set does not hold yet, in order.
    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        storage.modify { set in for e in elements where !set.contains(e) { set.append(e) } }
    }

    /// Removes `element`, if the set holds it (a removed linked object stays in the realm).
    public func remove(_ element: Element) { storage.modify { $0.removeAll { $0 == element } } }

    /// Removes every element (linked objects stay in the realm).
    public func removeAll() { storage.modify { $0.removeAll() } }

    /// Adds the elements of `other` the set does not hold yet (as `insert(objectsIn:)`).
    public func formUnion<S: Sequence>(_ other: S) where S.Element == Element { insert(objectsIn: other) }

    /// Keeps only the elements that `other` also holds.
    ///
    /// ```swift
    /// try realm.write { person.tags.formIntersection(["admin", "staff"]) }
    /// ```
    public func formIntersection<S: Sequence>(_ other: S) where S.Element == Element {
        let keep = Set(other)
        storage.modify { $0.removeAll { !keep.contains($0) } }
    }

    /// Removes the elements that `other` holds.
    public func subtract<S: Sequence>(_ other: S) where S.Element == Element {
        let drop = Set(other)
        storage.modify { $0.removeAll { drop.contains($0) } }
    }

    /// Whether every element of the set is in `other`.
    public func isSubset<S: Sequence>(of other: S) -> Bool where S.Element == Element { Set(storage.current).isSubset(of: Set(other)) }

    /// Whether the set and `other` have at least one element in common.
    public func intersects<S: Sequence>(_ other: S) -> Bool where S.Element == Element { !Set(storage.current).isDisjoint(with: Set(other)) }
}

extension MutableSet: _Persistable {
    public static var _rlmKind: _PropertyKind {
        _PropertyKind(Element._rlmKind.type, "MutableSet<\(Element._rlmKind.name)>", linkTarget: Element._rlmKind.linkTarget, isList: true)
    }
    public static var _rlmIsOptional: Bool { Element._rlmIsOptional }
    public static func _rlmDefault() -> MutableSet<Element> { MutableSet() }

    public static func _rlmGet(_ stored: _StoredValue) -> MutableSet<Element> {
        guard let (owner, property) = stored.list else { return MutableSet() }
        return MutableSet(owner: owner, property: property)
    }

    public func _rlmSet() -> _StoredValue { storage.stored }
}

extension MutableSet: UnmanagedCollectionConvertible {
    /// An unmanaged set of an array's or set's distinct elements, first occurrence first
    /// (`create(_:value:)`).
    static func converted(from value: Any, objects: LinkedObjectMaker) throws(ValueMismatch) -> MutableSet<Element> {
        let set = MutableSet()
        var seen = Set<Element>()
        set.storage.elements = try ValueConversion.elements(of: value, as: Element.self, objects: objects).filter { seen.insert($0).inserted }
        return set
    }
}
