import RealmStorage

/// An ordered list of values or objects, persisted as one property:
/// `@Persisted var dogs: List<Dog>`, `@Persisted var tags: List<String>`.
///
/// Unmanaged, it is a plain array. Managed, it is a live view of the list in the realm: every
/// read goes to the current version and every change needs a write transaction.
///
/// ```swift
/// try realm.write {
///     person.dogs.append(rex)
/// }
/// print(person.dogs.count)
/// ```
public final class List<Element: _Persistable>: RandomAccessCollection, CustomStringConvertible {
    var storage: ListStorage<Element>

    /// An empty, unmanaged list (a model class declares `@Persisted var dogs: List<Dog>`).
    public init() { storage = ListStorage() }

    init(owner: ObjectBase, property: Int) { storage = ListStorage(owner: owner, property: property) }

    /// The realm managing the list, or nil while unmanaged.
    public var realm: Realm? { storage.owner?.realm }

    /// Always 0.
    public var startIndex: Int { 0 }
    /// The number of elements.
    public var endIndex: Int { storage.count }

    /// The element at `position`; setting it (managed: inside a write) replaces it.
    ///
    /// ```swift
    /// try realm.write { person.tags[0] = "home" }
    /// ```
    public subscript(position: Int) -> Element {
        get { storage.element(position) }
        set {
            storage.modify { $0[position] = newValue }
        }
    }

    /// The element type and the elements.
    public var description: String { "List<\(Element._rlmKind.name)> \(storage.current)" }

    // MARK: Changing

    /// Appends `element` (managed: inside a write; an unmanaged object is added with it).
    ///
    /// ```swift
    /// try realm.write { person.dogs.append(rex) }
    /// ```
    public func append(_ element: Element) { storage.modify { $0.append(element) } }

    /// Appends every element of `elements`, in order.
    public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element { storage.modify { $0.append(contentsOf: elements) } }

    /// Inserts `element` at `index`, moving those after it up by one.
    public func insert(_ element: Element, at index: Int) { storage.modify { $0.insert(element, at: index) } }

    /// Removes the element at `index` (a linked object stays in the realm).
    public func remove(at index: Int) { storage.modify { _ = $0.remove(at: index) } }

    /// Removes every element (linked objects stay in the realm).
    public func removeAll() { storage.modify { $0.removeAll() } }

    /// Removes the last element; the list must not be empty.
    public func removeLast() { storage.modify { _ = $0.removeLast() } }

    /// Moves the element at `from` to `to`.
    public func move(from: Int, to: Int) {
        storage.modify { elements in
            let element = elements.remove(at: from)
            elements.insert(element, at: to)
        }
    }

    /// Exchanges the elements at `i` and `j`.
    public func swapAt(_ i: Int, _ j: Int) { storage.modify { $0.swapAt(i, j) } }

    /// Replaces the element at `index` with `object`.
    public func replace(index: Int, object: Element) { storage.modify { $0[index] = object } }
}

extension List: _Persistable {
    public static var _rlmKind: _PropertyKind {
        _PropertyKind(Element._rlmKind.type, "List<\(Element._rlmKind.name)>", linkTarget: Element._rlmKind.linkTarget, isList: true)
    }
    public static var _rlmIsOptional: Bool { Element._rlmIsOptional }
    public static func _rlmDefault() -> List<Element> { List() }

    public static func _rlmGet(_ stored: _StoredValue) -> List<Element> {
        guard let (owner, property) = stored.list else { return List() }
        return List(owner: owner, property: property)
    }

    /// Assigning a list to a managed property replaces its elements.
    public func _rlmSet() -> _StoredValue { storage.stored }
}

extension List: UnmanagedCollectionConvertible {
    /// An unmanaged list of an array's elements (`create(_:value:)`).
    static func converted(from value: Any, objects: LinkedObjectMaker) throws(ValueMismatch) -> List<Element> {
        let list = List()
        list.storage.elements = try ValueConversion.elements(of: value, as: Element.self, objects: objects)
        return list
    }
}
