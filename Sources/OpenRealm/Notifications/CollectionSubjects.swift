import RealmStorage

// The collections under observation: results, lists and sets (one list column of their
// owner), linking objects and maps. Each reads its snapshot from the realm's current state and
// says which change sets can concern it (ObservationCore.swift).

/// The delta between two element lists, with the modified objects among the elements present
/// in both (as `watch` counts changes), or nil when there is nothing to report.
func orderedDelta(from old: [Value], to new: [Value], elements: Object.Type?, watch: Watch,
                  changes: ChangeSet?, realm: Realm, isFinal: Bool = false) -> CollectionDelta? {
    var delta = CollectionDelta(old: old, new: new, modified: [], replaced: [], isFinal: isFinal)
    if let elements, let binding = try? realm.binding(for: elements) {
        let before = Set(old.compactMap(\.linkedKey))
        var candidates = Set(new.compactMap(\.linkedKey))
        candidates.formIntersection(before)
        if let changes {
            if let table = changes.tables[binding.table] {
                delta.replaced = candidates.filter { table.deleted.contains($0.value) && table.inserted.contains($0.value) }
                candidates.subtract(delta.replaced)
            }
            let checker = ChangeChecker(changes, realm)
            delta.modified = candidates.filter { checker.isModified(binding, $0, watch) }
        } else {
            delta.modified = candidates
        }
    }
    return delta.isEmpty ? nil : delta
}

extension Value {
    /// The object a link value points at.
    var linkedKey: ObjectKey? {
        if case .link(let key) = self { return key }
        return nil
    }
}

// MARK: - Results

struct ResultsSubject<Element: Object>: ObservedSubject {
    let results: Results<Element>
    let watch: Watch
    /// Every class the query can read, and those the watch follows.
    let dependencies: [Object.Type]

    init(_ results: Results<Element>, keyPaths: [String]?) {
        self.results = results
        watch = Watch.of(keyPaths, in: results.query.schema, otherwise: .collectionDefault)
        dependencies = reachableClasses(from: Element.self)
    }

    var realm: Realm { results.realm }
    var deliversInitial: Bool { true }

    func snapshot() -> [ObjectKey] { results.keys }

    func mayBeAffected(by changes: ChangeSet) -> Bool {
        // Results over a collection's objects read them from their owner, in any table.
        guard case .table = results.query.source else { return !changes.isEmpty }
        return ChangeChecker(changes, realm).touches(dependencies)
    }

    func delta(from old: [ObjectKey], to new: [ObjectKey], changes: ChangeSet?) -> CollectionDelta? {
        orderedDelta(from: old.map(Value.link), to: new.map(Value.link), elements: Element.self, watch: watch, changes: changes, realm: realm)
    }

    func initialChange() -> RealmCollectionChange<Results<Element>> { .initial(results) }

    func change(for delta: CollectionDelta) -> RealmCollectionChange<Results<Element>> {
        let (deletions, insertions, modifications) = delta.indices()
        return .update(results, deletions: deletions, insertions: insertions, modifications: modifications)
    }
}

// MARK: - Lists, sets and maps: one property of their owner

/// An observed list column of an object: the elements of a `List` or `MutableSet`, or the
/// entries of a `Map` (its keys column beside).
struct OwnedCollection {
    let owner: ManagedObject
    let property: Int
    let elements: Object.Type?
    let watch: Watch
    let elementClasses: [Object.Type]

    init(owner: ManagedObject?, property: Int, elements: Object.Type?, keyPaths: [String]?, what: String) {
        guard let owner else { misuse("Change notifications are only supported on managed collections.") }
        ensure(!owner.isInvalidated, "Cannot observe a \(what) of an object that has been deleted or invalidated")
        self.owner = owner
        self.property = property
        self.elements = elements
        if let elements, let schema = try? ObjectSchema.of(elements) {
            watch = Watch.of(keyPaths, in: schema, otherwise: .collectionDefault)
            elementClasses = watch.classes(from: elements)
        } else {
            watch = .properties([])
            elementClasses = []
        }
    }

    var realm: Realm { owner.realm }

    /// The values of list column `index` of the owner now; nil when the owner is gone.
    func read(_ index: Int) -> [Value]? {
        let view = try? realm.tableView(owner.table)
        return try? view?.row(owner.key)?.list(owner.binding.columns[index])
    }

    func mayBeAffected(by changes: ChangeSet) -> Bool {
        if let table = changes.tables[owner.table], table.deleted.contains(owner.key.value) || table.modified.contains(owner.key.value) {
            return true
        }
        return !elementClasses.isEmpty && ChangeChecker(changes, realm).touches(elementClasses)
    }

    /// Whether the owner was deleted (perhaps with another object inserted under its key);
    /// `found`: whether the new snapshot found it.
    func ownerGone(found: Bool, _ changes: ChangeSet?) -> Bool {
        !found || changes?.tables[owner.table]?.deleted.contains(owner.key.value) == true
    }
}

/// A `List` or a `MutableSet` under observation.
struct ListSubject<Collection>: ObservedSubject {
    let collection: Collection
    let owned: OwnedCollection

    var realm: Realm { owned.realm }
    var deliversInitial: Bool { true }

    func snapshot() -> [Value]? { owned.read(owned.property) }

    func mayBeAffected(by changes: ChangeSet) -> Bool { owned.mayBeAffected(by: changes) }

    func delta(from old: [Value]?, to new: [Value]?, changes: ChangeSet?) -> CollectionDelta? {
        guard let old else { return nil }
        let gone = owned.ownerGone(found: new != nil, changes)
        return orderedDelta(from: old, to: gone ? [] : new ?? [], elements: owned.elements, watch: owned.watch,
                            changes: changes, realm: realm, isFinal: gone)
    }

    func initialChange() -> RealmCollectionChange<Collection> { .initial(collection) }

    func change(for delta: CollectionDelta) -> RealmCollectionChange<Collection> {
        let (deletions, insertions, modifications) = delta.indices()
        return .update(collection, deletions: deletions, insertions: insertions, modifications: modifications)
    }
}

/// A `Map` under observation: changes are reported by key.
struct MapSubject<Key: _MapKey, MapValue: _Persistable>: ObservedSubject {
    let map: Map<Key, MapValue>
    let owned: OwnedCollection

    var realm: Realm { owned.realm }
    var deliversInitial: Bool { true }

    func snapshot() -> [MapEntry]? {
        guard let keysIndex = owned.owner.schema.properties[owned.property].mapKeysIndex,
              let keys = owned.read(keysIndex), let values = owned.read(owned.property) else { return nil }
        return zip(keys, values).map { key, value in
            MapEntry(key: { if case .string(let string) = key { string } else { "" } }(), value: value)
        }
    }

    func mayBeAffected(by changes: ChangeSet) -> Bool { owned.mayBeAffected(by: changes) }

    func delta(from old: [MapEntry]?, to new: [MapEntry]?, changes: ChangeSet?) -> MapDelta? {
        guard let old else { return nil }
        let gone = owned.ownerGone(found: new != nil, changes)
        let entries = gone ? [] : new ?? []
        // The same rules as for lists decide which linked objects count as modified.
        let objects = orderedDelta(from: old.map(\.value), to: entries.map(\.value), elements: owned.elements, watch: owned.watch,
                                   changes: changes, realm: realm)
        let delta = MapDelta(old: old, new: entries, modified: objects?.modified ?? [], replaced: objects?.replaced ?? [], isFinal: gone)
        return delta.isEmpty ? nil : delta
    }

    func initialChange() -> RealmMapChange<Map<Key, MapValue>> { .initial(map) }

    func change(for delta: MapDelta) -> RealmMapChange<Map<Key, MapValue>> {
        let (deletions, insertions, modifications) = delta.keys()
        let key = { (string: String) in Key(_rlmKeyString: string) }
        return .update(map, deletions: deletions.map(key), insertions: insertions.map(key), modifications: modifications.map(key))
    }
}

// MARK: - Linking objects

/// The objects linking to an owner through one property, under observation.
struct LinkingObjectsSubject<Element: Object>: ObservedSubject {
    let owned: OwnedCollection
    let dependencies: [Object.Type]

    init(owner: ManagedObject?, property: Int, keyPaths: [String]?) {
        owned = OwnedCollection(owner: owner, property: property, elements: Element.self, keyPaths: keyPaths, what: "LinkingObjects")
        dependencies = owned.elementClasses + [owned.owner.schema.objectType]
    }

    var realm: Realm { owned.realm }
    var deliversInitial: Bool { true }

    /// A fresh value: `LinkingObjects` reads its objects when it is made.
    var collection: LinkingObjects<Element> { LinkingObjects(owner: owned.owner, property: owned.property) }

    func snapshot() -> [ObjectKey]? {
        guard (try? realm.tableView(owned.owner.table).contains(owned.owner.key)) == true else { return nil }
        return LinkingObjects<Element>.read(owned.owner, owned.property).1
    }

    func mayBeAffected(by changes: ChangeSet) -> Bool { ChangeChecker(changes, realm).touches(dependencies) }

    func delta(from old: [ObjectKey]?, to new: [ObjectKey]?, changes: ChangeSet?) -> CollectionDelta? {
        guard let old else { return nil }
        let gone = new == nil || changes?.tables[owned.owner.table]?.deleted.contains(owned.owner.key.value) == true
        return orderedDelta(from: old.map(Value.link), to: gone ? [] : (new ?? []).map(Value.link), elements: Element.self,
                            watch: owned.watch, changes: changes, realm: realm, isFinal: gone)
    }

    func initialChange() -> RealmCollectionChange<LinkingObjects<Element>> { .initial(collection) }

    func change(for delta: CollectionDelta) -> RealmCollectionChange<LinkingObjects<Element>> {
        let (deletions, insertions, modifications) = delta.indices()
        return .update(collection, deletions: deletions, insertions: insertions, modifications: modifications)
    }
}
