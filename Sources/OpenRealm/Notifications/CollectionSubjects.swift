import RealmStorage

// The collections under observation: results, lists and sets (one list column of their
// owner), linking objects and maps. Each reads its snapshot from the realm's current state and
// says which change sets can concern it (ObservationCore.swift).

/// The objects among a collection's elements, as an observation watches them: their class,
/// which of their changes count, and which classes' changes can make them count.
struct ObservedElements {
    /// The class of the elements; nil for values.
    let type: Object.Type?
    let watch: Watch
    let classes: [Object.Type]

    init(_ type: Object.Type?, keyPaths: [String]?) {
        self.type = type
        if let type, let schema = try? ObjectSchema.of(type) {
            watch = Watch.of(keyPaths, in: schema, otherwise: .collectionDefault)
            classes = watch.classes(from: type)
        } else {
            watch = .properties([])
            classes = []
        }
    }

    /// `elements` as a snapshot keeps them: with key paths, with the watched values of the
    /// objects among them (WatchedValues.swift).
    func snapshot<Element>(_ elements: [Element], objects: (Element) -> ObjectKey?, in realm: Realm) -> CollectionSnapshot<Element> {
        guard let indexes = watch.comparedIndexes, let type, let binding = try? realm.binding(for: type) else {
            return CollectionSnapshot(elements: elements)
        }
        let values = WatchedProperties(binding: binding, indexes: indexes).states(of: elements.lazy.compactMap(objects), in: realm)
        return CollectionSnapshot(elements: elements, values: values)
    }
}

/// A collection as a snapshot keeps it: its elements, and with key paths the values of the
/// watched properties of the objects among them.
struct CollectionSnapshot<Element> {
    var elements: [Element]
    var values: [ObjectKey: [PropertyState]] = [:]

    /// The same snapshot with its elements transformed (object keys as link values, map
    /// entries as their values), as `orderedDelta` compares them.
    func mapElements<T>(_ transform: (Element) -> T) -> CollectionSnapshot<T> {
        CollectionSnapshot<T>(elements: elements.map(transform), values: values)
    }
}

/// The delta between two element lists, with the modified objects among the elements present
/// in both (as `observed` counts changes, comparing the watched values the snapshots keep), or
/// nil when there is nothing to report.
func orderedDelta(from old: CollectionSnapshot<Value>, to new: CollectionSnapshot<Value>, _ observed: ObservedElements,
                  changes: ChangeSet?, realm: Realm, isFinal: Bool = false, inPlace: Bool = false) -> CollectionDelta? {
    orderedDelta(from: old.elements, to: new.elements, of: observed.type, changes: changes, realm: realm, isFinal: isFinal,
                 inPlace: inPlace) { binding, key, checker in
        observed.watch.isModified(binding, key, old: old.values[key], new: new.values[key], checker)
    }
}

/// The delta between two element lists, whose objects are of class `type`: the objects present
/// in both that `isModified` finds modified (given their table binding and the delivery's
/// checker) are modifications; every one of them when the change sets are unknown.
func orderedDelta(from old: [Value], to new: [Value], of type: Object.Type?, changes: ChangeSet?, realm: Realm, isFinal: Bool = false,
                  inPlace: Bool = false, isModified: (TableBinding, ObjectKey, ChangeChecker) -> Bool) -> CollectionDelta? {
    var delta = CollectionDelta(old: old, new: new, modified: [], replaced: [], isFinal: isFinal, replacesInPlace: inPlace)
    if let type, let binding = try? realm.binding(for: type) {
        var candidates = Set(new.compactMap(\.linkedKey))
        candidates.formIntersection(old.compactMap(\.linkedKey))
        if let changes {
            if let table = changes.tables[binding.table] {
                delta.replaced = candidates.filter { table.deleted.contains($0.value) && table.inserted.contains($0.value) }
                candidates.subtract(delta.replaced)
            }
            let checker = ChangeChecker(changes, realm)
            delta.modified = candidates.filter { isModified(binding, $0, checker) }
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

/// A result as its observation keeps it: its keys, the table binding they were read with, and
/// when its deltas can be computed from the change sets, its order (KeptOrder.swift). No
/// watched values: with key paths, a delivery reads those of the objects the change sets name,
/// at the anchor and now (WatchedChanges.swift).
struct ResultsSnapshot {
    var keys: [ObjectKey]
    /// The binding the keys were read with; watched values are read at the anchor only with
    /// the same one (another means the schema changed).
    var binding: ObjectIdentifier?
    var order: KeptOrder?
}

struct ResultsSubject<Element: Object>: ObservedSubject {
    let results: Results<Element>
    let observed: ObservedElements
    /// Every class the query can read (the watch follows no others), and for results over a
    /// collection's objects, the class of the collection's owner.
    let dependencies: [Object.Type]
    /// How to apply change sets to the kept result; nil when every delivery reads the whole
    /// result again (see `advance(_:by:)`).
    let plan: IncrementalPlan?
    /// Without key paths: the classes other than `Element` whose changes can change the result
    /// or count as a modification of its objects; whether `Element` links to itself through
    /// stored links (directly or on), so that a change to one of its objects can modify
    /// another. (With key paths, the watched links are followed backwards instead:
    /// WatchedChanges.swift.)
    private let others: [Object.Type]
    private let linksToItself: Bool

    init(_ results: Results<Element>, keyPaths: [String]?) {
        // What a change can touch is found from the model classes, which dynamic results lack:
        // observed, they would stay silent. (Each DynamicObject can be observed.)
        ensure(!results.query.schema.isStored, "Change notifications of dynamic results (realm.dynamicObjects) are not supported yet: "
               + "observe each DynamicObject, or read the results again after refresh()")
        self.results = results
        observed = ObservedElements(Element.self, keyPaths: keyPaths)
        dependencies = reachableClasses(from: Element.self) + (results.query.source.owner.map { [$0.schema.objectType] } ?? [])
        plan = IncrementalPlan(results.query)
        others = dependencies.filter { $0 != Element.self }
        linksToItself = storedLinkTargets(of: Element.self).contains { storedLinkClosure(from: $0).contains { $0 == Element.self } }
    }

    var realm: Realm { results.realm }
    var deliversInitial: Bool { true }

    /// The objects now; nil once the object whose collection they come from is deleted
    /// (reading them then would trap).
    func snapshot() -> ResultsSnapshot? {
        if let owner = results.query.source.owner, (try? realm.tableView(owner.table).contains(owner.key)) != true { return nil }
        let binding = try? realm.binding(for: Element.self)
        var order: KeptOrder?
        if plan != nil, let binding { order = KeptOrder(binding) }
        return ResultsSnapshot(keys: results.keys, binding: binding.map(ObjectIdentifier.init), order: order)
    }

    func mayBeAffected(by changes: ChangeSet) -> Bool { ChangeChecker(changes, realm).touches(dependencies) }

    /// Per changed object when the kept order allows: a commit that changed objects of the
    /// class none of which was or is in the result does not wake the observer. With key
    /// paths, a commit that changed a class on a watched link path in a watched column wakes
    /// it (the objects linking to the changed ones are looked for by the delivery).
    func mayBeAffected(by changes: ChangeSet, from old: ResultsSnapshot?, anchor: ReadTransaction?) -> Bool {
        guard let old, let plan, let order = old.order, let (binding, table, changed) = applicable(old, changes, anchor) else {
            return mayBeAffected(by: changes)
        }
        if case .properties(let entries) = observed.watch, WatchedChanges.linksMayCount(entries, binding, changes, in: realm) { return true }
        return (try? order.concerns(changed, table, keys: old.keys, plan, binding, anchor: anchor, in: realm)) ?? true
    }

    /// The kept order, the binding, the table's changes and the changed keys, when `changes`
    /// can be applied to `old` in place. Not when:
    ///   - the query has no plan (`IncrementalPlan.init`: a collection as the source, a
    ///     distinct, a filter or sort through a link);
    ///   - the schema changed (another table binding);
    ///   - without key paths: another class the result depends on changed (a linked object
    ///     can count as a modification of the objects linking to it, up to four links away),
    ///     or the class links to itself;
    ///   - with key paths: the version the result was kept at cannot be read (watched values
    ///     are compared there; see `WatchedChanges`, which also says when links are followed);
    ///   - more than an eighth of the result changed (then the full comparison is cheaper);
    ///   - the result is sorted and the version it was kept at cannot be read (brought there
    ///     as a write began on a commit whose group sync was still running: RealmNotifier
    ///     `ChangeSource.readableVersion`).
    /// Commits whose change sets are unknown (another process's, without history) never get
    /// here: `changes` is nil for them and the full comparison runs.
    private func applicable(_ old: ResultsSnapshot, _ changes: ChangeSet, _ anchor: ReadTransaction?) -> (TableBinding, TableChanges, [ObjectKey])? {
        guard let plan, let order = old.order, anchor != nil || !plan.isSorted,
              let binding = try? realm.binding(for: Element.self),
              ObjectIdentifier(binding) == order.binding else { return nil }
        switch observed.watch {
        case .everything:
            guard !linksToItself, !ChangeChecker(changes, realm).touches(others) else { return nil }
        case .properties:
            guard anchor != nil else { return nil }
        }
        let table = changes.tables[binding.table] ?? TableChanges()
        guard Self.isSmall(table.inserted.count + table.deleted.count + table.modified.count, of: old.keys.count) else { return nil }
        return (binding, table, KeptOrder.changedKeys(table))
    }

    /// Whether `changed` objects are few enough against a result of `count` for the kept
    /// order: beyond an eighth, the full comparison is cheaper.
    private static func isSmall(_ changed: Int, of count: Int) -> Bool { changed <= 16 || changed * 8 <= count }

    func advance(_ old: inout ResultsSnapshot?, by changes: ChangeSet, anchor: ReadTransaction?) -> Advanced<CollectionDelta>? {
        let advanced = advanceInPlace(&old, by: changes, anchor: anchor)
        #if DEBUG
        if advanced == nil, plan != nil { IncrementalDeliveries.recordFullComparison() }
        #endif
        return advanced
    }

    private func advanceInPlace(_ old: inout ResultsSnapshot?, by changes: ChangeSet, anchor: ReadTransaction?) -> Advanced<CollectionDelta>? {
        guard let plan, let (binding, table, changed) = old.flatMap({ applicable($0, changes, anchor) }), var snapshot = old,
              let order = snapshot.order else { return nil }
        // With key paths, which objects count as modified, read before anything moves.
        let watched: WatchedChanges?
        if case .properties(let entries) = observed.watch {
            guard let anchor, let found = try? WatchedChanges(entries, binding, changes, anchor: anchor, in: realm),
                  Self.isSmall(changed.count + found.throughLinks.count, of: snapshot.keys.count) else { return nil }
            watched = found
        } else {
            watched = nil
        }
        // Let go of the other copies so that the keys change in place.
        old = nil
        snapshot.order = nil
        #if DEBUG
        let before = snapshot.keys
        #endif
        var indices: CollectionIndices
        do {
            indices = try order.apply(table, changed, to: &snapshot.keys, plan, binding, anchor: anchor, in: realm) { key in
                watched?.isModified(key) ?? table.modified.contains(key.value)
            }
        } catch {
            // A read failed; the keys are as they were: the full comparison reads again.
            snapshot.order = order
            old = snapshot
            return nil
        }
        if let watched, !watched.throughLinks.isEmpty {
            // Objects that count through a link only: they did not change, so they stay where
            // they are in the result, if they are in it.
            let linkedOnly = watched.throughLinks.subtracting(changed)
            let positions = order.positions(of: linkedOnly, in: snapshot.keys, plan, binding, in: realm)
            indices.modifications = Array(Set(indices.modifications).union(positions)).sorted()
        }
        snapshot.order = order
        old = snapshot
        #if DEBUG
        verifyIncremental(from: before, to: snapshot.keys, indices, changes, anchor: anchor)
        #endif
        guard !indices.isEmpty else { return .unchanged }
        var delta = CollectionDelta(old: [], new: [], modified: [], replaced: [])
        delta.known = indices
        return .changed(delta)
    }

    func delta(from old: ResultsSnapshot?, to new: ResultsSnapshot?, changes: ChangeSet?) -> CollectionDelta? {
        delta(from: old, to: new, changes: changes, anchor: nil)
    }

    /// The full comparison. With key paths, the objects the change sets mark modified have
    /// their watched values read at `anchor` and now; where `anchor` cannot be read (or the
    /// schema changed since), a watched column set in the table counts
    /// (`Watch.isModified(_:_:changedValues:_:)`).
    func delta(from old: ResultsSnapshot?, to new: ResultsSnapshot?, changes: ChangeSet?, anchor: ReadTransaction?) -> CollectionDelta? {
        guard let old else { return nil }
        let owner = results.query.source.owner
        let gone = new == nil || owner.map { changes?.tables[$0.table]?.deleted.contains($0.key.value) == true } == true
        let now = gone ? [] : new?.keys ?? []
        var changedValues: Set<ObjectKey>?
        if case .properties(let entries) = observed.watch, let changes, let anchor, let binding = try? realm.binding(for: Element.self),
           old.binding == ObjectIdentifier(binding) {
            changedValues = try? WatchedChangeReader(changes: changes, realm: realm).changedValues(binding, entries.map(\.index), anchor: anchor)
        }
        return orderedDelta(from: old.keys.map(Value.link), to: now.map(Value.link), of: Element.self, changes: changes, realm: realm,
                            isFinal: gone) { binding, key, checker in
            observed.watch.isModified(binding, key, changedValues: changedValues, checker)
        }
    }

    func initialChange() -> RealmCollectionChange<Results<Element>> { .initial(results) }

    func change(for delta: CollectionDelta) -> RealmCollectionChange<Results<Element>> {
        let (deletions, insertions, modifications) = delta.indices()
        return .update(results, deletions: deletions, insertions: insertions, modifications: modifications)
    }
}

/// The classes `type`'s stored links (links, lists, sets and maps of objects) point at: what
/// the default watch follows (linking objects are not followed).
private func storedLinkTargets(of type: Object.Type) -> [Object.Type] {
    ((try? ObjectSchema.of(type))?.allProperties ?? []).filter(\.isStored).compactMap(\.linkTarget)
}

/// `type` and every class reachable from it through stored links.
private func storedLinkClosure(from type: Object.Type) -> [Object.Type] {
    var found: [ObjectIdentifier: Object.Type] = [:]
    var pending = [type]
    while let next = pending.popLast() {
        guard found.updateValue(next, forKey: ObjectIdentifier(next)) == nil else { continue }
        pending += storedLinkTargets(of: next)
    }
    return Array(found.values)
}

// MARK: - Lists, sets and maps: one property of their owner

/// An observed list column of an object: the elements of a `List` or `MutableSet`, or the
/// entries of a `Map` (its keys column beside).
struct OwnedCollection {
    let owner: ObjectBase
    let property: Int
    let observed: ObservedElements

    init(owner: ObjectBase?, property: Int, elements: Object.Type?, keyPaths: [String]?, what: String) {
        guard let owner else { misuse("Change notifications are only supported on managed collections.") }
        ensure(!owner.isInvalidated, "Cannot observe a \(what) of an object that has been deleted or invalidated")
        self.owner = owner
        self.property = property
        observed = ObservedElements(elements, keyPaths: keyPaths)
    }

    var realm: Realm { owner.managedRealm }

    /// The values of list column `index` of the owner now; nil when the owner is gone.
    func read(_ index: Int) -> [Value]? {
        // An owner deleted, or inserted by a write that did not commit, is gone even when
        // another object has its key now.
        guard owner.isLive(in: realm) else { return nil }
        let view = try? realm.tableView(owner.table)
        return try? view?.row(owner.key)?.list(owner.binding.columns[index])
    }

    func mayBeAffected(by changes: ChangeSet) -> Bool {
        if let table = changes.tables[owner.table], table.deleted.contains(owner.key.value) || table.modified.contains(owner.key.value) {
            return true
        }
        return !observed.classes.isEmpty && ChangeChecker(changes, realm).touches(observed.classes)
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
    /// Whether an element set in its place is a modification (a list) rather than a deletion
    /// and an insertion (a set).
    let replacesInPlace: Bool

    var realm: Realm { owned.realm }
    var deliversInitial: Bool { true }

    func snapshot() -> CollectionSnapshot<Value>? {
        owned.read(owned.property).map { owned.observed.snapshot($0, objects: \.linkedKey, in: realm) }
    }

    func mayBeAffected(by changes: ChangeSet) -> Bool { owned.mayBeAffected(by: changes) }

    func delta(from old: CollectionSnapshot<Value>?, to new: CollectionSnapshot<Value>?, changes: ChangeSet?) -> CollectionDelta? {
        guard let old else { return nil }
        let gone = owned.ownerGone(found: new != nil, changes)
        return orderedDelta(from: old, to: gone ? CollectionSnapshot(elements: []) : new ?? CollectionSnapshot(elements: []), owned.observed,
                            changes: changes, realm: realm, isFinal: gone, inPlace: replacesInPlace)
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

    func snapshot() -> CollectionSnapshot<MapEntry>? {
        guard let keysIndex = owned.owner.schema.allProperties[owned.property].mapKeysIndex,
              let keys = owned.read(keysIndex), let values = owned.read(owned.property) else { return nil }
        let entries = zip(keys, values).map { key, value in
            MapEntry(key: { if case .string(let string) = key { string } else { "" } }(), value: value)
        }
        return owned.observed.snapshot(entries, objects: \.value.linkedKey, in: realm)
    }

    func mayBeAffected(by changes: ChangeSet) -> Bool { owned.mayBeAffected(by: changes) }

    func delta(from old: CollectionSnapshot<MapEntry>?, to new: CollectionSnapshot<MapEntry>?, changes: ChangeSet?) -> MapDelta? {
        guard let old else { return nil }
        let gone = owned.ownerGone(found: new != nil, changes)
        let now = gone ? CollectionSnapshot(elements: []) : new ?? CollectionSnapshot(elements: [])
        // The same rules as for lists decide which linked objects count as modified.
        let objects = orderedDelta(from: old.mapElements(\.value), to: now.mapElements(\.value), owned.observed, changes: changes, realm: realm)
        let delta = MapDelta(old: old.elements, new: now.elements, modified: objects?.modified ?? [], replaced: objects?.replaced ?? [],
                             isFinal: gone)
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

    init(owner: ObjectBase?, property: Int, keyPaths: [String]?) {
        owned = OwnedCollection(owner: owner, property: property, elements: Element.self, keyPaths: keyPaths, what: "LinkingObjects")
        dependencies = owned.observed.classes + [owned.owner.schema.objectType]
    }

    var realm: Realm { owned.realm }
    var deliversInitial: Bool { true }

    /// A fresh value: `LinkingObjects` reads its objects when it is made.
    var collection: LinkingObjects<Element> { LinkingObjects(owner: owned.owner, property: owned.property) }

    func snapshot() -> CollectionSnapshot<ObjectKey>? {
        guard (try? realm.tableView(owned.owner.table).contains(owned.owner.key)) == true else { return nil }
        return owned.observed.snapshot(LinkingObjects<Element>.read(owned.owner, owned.property).1, objects: { $0 }, in: realm)
    }

    func mayBeAffected(by changes: ChangeSet) -> Bool { ChangeChecker(changes, realm).touches(dependencies) }

    func delta(from old: CollectionSnapshot<ObjectKey>?, to new: CollectionSnapshot<ObjectKey>?, changes: ChangeSet?) -> CollectionDelta? {
        guard let old else { return nil }
        let gone = new == nil || changes?.tables[owned.owner.table]?.deleted.contains(owned.owner.key.value) == true
        let now = gone ? CollectionSnapshot(elements: []) : new ?? CollectionSnapshot(elements: [])
        return orderedDelta(from: old.mapElements(Value.link), to: now.mapElements(Value.link), owned.observed, changes: changes,
                            realm: realm, isFinal: gone)
    }

    func initialChange() -> RealmCollectionChange<LinkingObjects<Element>> { .initial(collection) }

    func change(for delta: CollectionDelta) -> RealmCollectionChange<LinkingObjects<Element>> {
        let (deletions, insertions, modifications) = delta.indices()
        return .update(collection, deletions: deletions, insertions: insertions, modifications: modifications)
    }
}
