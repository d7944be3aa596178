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
    /// The elements while unmanaged.
    var elements: [Element]
    /// While managed: the owning object and the property index.
    let owner: ManagedObject?
    let property: Int

    public init() {
        elements = []
        owner = nil
        property = 0
    }

    init(owner: ManagedObject, property: Int) {
        elements = []
        self.owner = owner
        self.property = property
    }

    /// The realm managing the list, or nil while unmanaged.
    public var realm: Realm? { owner?.realm }

    // MARK: Reading

    private var current: [Element] {
        guard let owner else { return elements }
        return owner.readList(property).map { Element._rlmGet(_StoredValue($0, realm: owner.realm)) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { owner.map { $0.readList(property).count } ?? elements.count }

    public subscript(position: Int) -> Element {
        get {
            guard let owner else { return elements[position] }
            let values = owner.readList(property)
            precondition(position >= 0 && position < values.count, "Index \(position) is out of bounds (must be less than \(values.count))")
            return Element._rlmGet(_StoredValue(values[position], realm: owner.realm))
        }
        set {
            modify { $0[position] = newValue }
        }
    }

    public var description: String { "List<\(Element._rlmKind.name)> \(Array(current))" }

    // MARK: Changing

    public func append(_ element: Element) { modify { $0.append(element) } }

    public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element { modify { $0.append(contentsOf: elements) } }

    public func insert(_ element: Element, at index: Int) { modify { $0.insert(element, at: index) } }

    public func remove(at index: Int) { modify { _ = $0.remove(at: index) } }

    public func removeAll() { modify { $0.removeAll() } }

    public func removeLast() { modify { _ = $0.removeLast() } }

    public func move(from: Int, to: Int) {
        modify { elements in
            let element = elements.remove(at: from)
            elements.insert(element, at: to)
        }
    }

    public func swapAt(_ i: Int, _ j: Int) { modify { $0.swapAt(i, j) } }

    public func replace(index: Int, object: Element) { modify { $0[index] = object } }

    /// Applies a change to the elements: in place while unmanaged, else read, change and
    /// write back the whole list (a write transaction is required).
    private func modify(_ change: (inout [Element]) -> Void) {
        guard let owner else {
            change(&elements)
            return
        }
        var values = current
        change(&values)
        owner.writeList(property, values.map { $0._rlmSet() })
    }

    /// The unmanaged elements as stored values (for `add`).
    var storedElements: [_StoredValue] { elements.map { $0._rlmSet() } }
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
    public func _rlmSet() -> _StoredValue { _StoredValue(.null, elements: Array(current).map { $0._rlmSet() }) }
}
