import RealmStorage

// An object under observation: its snapshot is the values of the watched properties, compared
// one by one at each delivery (the change sets say which objects changed, not which of their
// values did).

/// What changed in an object between two snapshots.
struct ObjectDelta: ObservedDelta {
    var old: [PropertyState]
    /// nil: deleted.
    var new: [PropertyState]?
    /// Positions (into the watched properties) whose linked objects changed along a watched
    /// key path: reported though the values compare equal.
    var touched: Set<Int>

    var isFinal: Bool { new == nil }

    /// The positions of the properties to report.
    var changedPositions: [Int] {
        guard let new else { return [] }
        return old.indices.filter { old[$0] != new[$0] || touched.contains($0) }
    }
}

/// An object under observation.
struct ObjectSubject<T: Object>: ObservedSubject {
    let object: T
    let realm: Realm
    let binding: TableBinding
    let key: ObjectKey
    let watch: Watch
    /// The watched properties, by index.
    let properties: [Int]
    /// Reads their values.
    let values: WatchedProperties
    /// Per property index, how to turn a stored value into its Swift value.
    let readers: [((_StoredValue) -> Any?)?]
    /// Classes linked along watched key paths.
    let linkedClasses: [Object.Type]

    init(_ object: T, keyPaths: [String]?) {
        guard let managed = object._managed else {
            misuse("Only objects which are managed by a Realm support change notifications")
        }
        ensure(!object.isInvalidated, "Object has been deleted or invalidated: it cannot be observed")
        self.object = object
        realm = managed.managedRealm
        binding = managed.binding
        key = managed.key
        // Object notifications are shallow unless key paths say otherwise (as in Realm), but an
        // embedded object is part of its parent: a change inside it is one of its property.
        let shallow = Watch.properties(managed.schema.allProperties.filter { $0.isStored && !$0.isHidden }.map { property in
            Watch.Entry(index: property.index, linked: property.linkTarget is EmbeddedObject.Type ? Watch.everything(depth: 3) : nil)
        })
        watch = Watch.of(keyPaths, in: managed.schema, otherwise: shallow)
        properties = watch.propertyIndexes(in: managed.schema)
        values = WatchedProperties(binding: managed.binding, indexes: properties)
        readers = Self.readers(of: managed.binding, in: realm)
        linkedClasses = watch.classes(from: managed.schema.objectType).filter { $0 != managed.schema.objectType }
    }

    /// Per property, the Swift value of a stored value: through the wrapper types of the
    /// model class (from its wrapper layout, else read from a new instance), or, for a class
    /// read from the file, as a `DynamicObject` reads it.
    private static func readers(of binding: TableBinding, in realm: Realm) -> [((_StoredValue) -> Any?)?] {
        let schema = binding.schema
        if schema.isStored {
            return schema.allProperties.map { property in
                property.isList ? nil : { DynamicObject.swiftValue($0.value, of: property, in: binding, realm: realm) }
            }
        }
        let types: [PersistedProperty.Type] = schema.wrapperLayout.map { $0.map(\.type) }
            ?? ObjectSchema.persistedChildren(of: schema.objectType.init()).map { type(of: $0.1) as PersistedProperty.Type }
        return schema.allProperties.indices.map { index in index < types.count ? types[index].swiftValue : nil }
    }

    var deliversInitial: Bool { false }

    func snapshot() -> [PropertyState]? { values.states(of: key, in: realm) }

    func mayBeAffected(by changes: ChangeSet) -> Bool {
        if let table = changes.tables[binding.table],
           table.deleted.contains(key.value) || table.modified.contains(key.value) { return true }
        return !linkedClasses.isEmpty && ChangeChecker(changes, realm).touches(linkedClasses)
    }

    func delta(from old: [PropertyState]?, to new: [PropertyState]?, changes: ChangeSet?) -> ObjectDelta? {
        guard let old else { return nil }
        // Deleted, or deleted and another object inserted under its key.
        guard let new, changes?.tables[binding.table]?.deleted.contains(key.value) != true else {
            return ObjectDelta(old: old, new: nil, touched: [])
        }
        // Properties are compared by value: the change sets keep the columns set per table,
        // not per object, and the engine writes nothing when a value is set to itself. A
        // property equal before and after is reported only when a linked object on its key
        // path changed.
        var touched = Set<Int>()
        if let changes, case .properties(let entries) = watch {
            let checker = ChangeChecker(changes, realm)
            for (position, index) in properties.enumerated() where old[position] == new[position] {
                guard let linked = entries.first(where: { $0.index == index })?.linked else { continue }
                if checker.linkedObjectIsModified(binding, key, binding.schema.allProperties[index], linked) { touched.insert(position) }
            }
        }
        let delta = ObjectDelta(old: old, new: new, touched: touched)
        return delta.changedPositions.isEmpty ? nil : delta
    }

    func initialChange() -> ObjectChange<T> { misuse("object observations report no initial change") }

    func change(for delta: ObjectDelta) -> ObjectChange<T> {
        guard let new = delta.new else { return .deleted }
        // After `realm.invalidate()` the observed instance is invalid; report a fresh one.
        let current = object.isInvalidated ? realm.materialize(T.self, binding, key) : object
        return .change(current, delta.changedPositions.map { position in
            let index = properties[position]
            return PropertyChange(name: binding.schema.allProperties[index].name,
                                  oldValue: swiftValue(delta.old[position], index), newValue: swiftValue(new[position], index))
        })
    }

    private func swiftValue(_ state: PropertyState, _ index: Int) -> Any? {
        guard case .value(let value) = state, let reader = readers[index] else { return nil }
        return reader(_StoredValue(value, realm: realm))
    }
}
