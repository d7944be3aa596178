import RealmStorage

/// An unordered collection of distinct values or objects, persisted as one property:
/// `@Persisted var tags: MutableSet<String>`.
///
/// Unmanaged, it is a plain collection. Managed, it is a live view of the set in the realm:
/// reads go to the current version and changes need a write transaction. Iteration order is
/// insertion order (not meaningful, but stable).
public final class MutableSet<Element: _Persistable & Hashable>: RandomAccessCollection, CustomStringConvertible {
    var storage: ListStorage<Element>

    public init() { storage = ListStorage() }

    init(owner: ObjectBase, property: Int) { storage = ListStorage(owner: owner, property: property) }

    public var realm: Realm? { storage.owner?.realm }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.count }
    public subscript(position: Int) -> Element { storage.element(position) }
    public var description: String { "MutableSet<\(Element._rlmKind.name)> \(storage.current)" }

    public func contains(_ element: Element) -> Bool { storage.current.contains(element) }

    public func insert(_ element: Element) {
        storage.modify { if !$0.contains(element) { $0.append(element) } }
    }

    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        storage.modify { set in for e in elements where !set.contains(e) { set.append(e) } }
    }

    public func remove(_ element: Element) { storage.modify { $0.removeAll { $0 == element } } }

    public func removeAll() { storage.modify { $0.removeAll() } }

    public func formUnion<S: Sequence>(_ other: S) where S.Element == Element { insert(objectsIn: other) }

    public func formIntersection<S: Sequence>(_ other: S) where S.Element == Element {
        let keep = Set(other)
        storage.modify { $0.removeAll { !keep.contains($0) } }
    }

    public func subtract<S: Sequence>(_ other: S) where S.Element == Element {
        let drop = Set(other)
        storage.modify { $0.removeAll { drop.contains($0) } }
    }

    public func isSubset<S: Sequence>(of other: S) -> Bool where S.Element == Element { Set(storage.current).isSubset(of: Set(other)) }

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
