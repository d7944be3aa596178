import RealmStorage

/// The storage shared by `List` and `MutableSet`: an array while unmanaged, one list column
/// of a managed object once managed (read from the current version, written whole).
struct ListStorage<Element: _Persistable> {
    /// The elements while unmanaged.
    var elements: [Element] = []
    /// While managed: the owning object and the property index.
    let owner: ObjectBase?
    let property: Int

    init() {
        owner = nil
        property = 0
    }

    init(owner: ObjectBase, property: Int) {
        self.owner = owner
        self.property = property
    }

    var current: [Element] {
        guard let owner else { return elements }
        return owner.readList(property).map { Element._rlmGet(owner.storedElement($0, of: property)) }
    }

    var count: Int { owner.map { $0.readList(property).count } ?? elements.count }

    /// Element `position`, decoding only that one (the owner keeps the list's values).
    func element(_ position: Int) -> Element {
        guard let owner else { return elements[position] }
        let values = owner.readList(property)
        ensure(position >= 0 && position < values.count, "Index \(position) is out of bounds (must be less than \(values.count))")
        return Element._rlmGet(owner.storedElement(values[position], of: property))
    }

    /// Applies a change: in place while unmanaged, else read, change and write back the
    /// whole list (a write transaction is required).
    mutating func modify(_ change: (inout [Element]) -> Void) {
        guard let owner else {
            change(&elements)
            return
        }
        var values = current
        change(&values)
        owner.writeList(property, values.map { $0._rlmSet() })
    }

    /// The elements as stored values, for `add` and assignment.
    var stored: _StoredValue { _StoredValue(.null, elements: current.map { $0._rlmSet() }) }
}
