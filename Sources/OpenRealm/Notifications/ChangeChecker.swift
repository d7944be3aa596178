import RealmStorage

// Which changes an observation counts, and whether an object has such changes.
//
// The change sets say per table which objects were modified and which columns were set (for
// the whole table, not per object). An object counts as modified for an observation when:
//
//   - with no key paths (`Watch.everything`, collections' default): it is among the
//     modified objects of its table, or an object it links to (through links, lists, sets
//     and maps of objects) is, up to four links away, as realm-core's collection notifiers
//     do;
//   - with key paths (`Watch.properties`): one of the watched properties changed, which
//     observations tell by comparing its values at two versions (WatchedValues.swift),
//     or, for a path that goes on through a link ("toys.brand"), a linked object counts as
//     modified for the rest of the path. There, at the linked object, a watched property
//     counts as changed when the object is among the modified ones and the property's
//     column was set in its table: a column set on another object of that table in the same
//     commit can make it count, as the change sets keep columns per table.
//
// Reading links costs a row read per object, so links are followed only towards tables that
// changed: into a class when it, or a class the rest of the watch reaches from it, has changes
// (answered once per class and watch in a delivery); the objects linking to others
// (`LinkingObjects`) are found by reading the origin table once per delivery, not once per
// object. Results kept from the change sets find the objects linking to changed ones the other
// way round (WatchedChanges.swift).

/// The properties of a class an observation counts changes of.
indirect enum Watch: Hashable {
    /// Every property, and through links every property of linked objects, `depth` links on.
    case everything(depth: Int)
    /// These properties; a link property may watch its linked objects too.
    case properties([Entry])

    /// One watched property (by index), and for a link along a longer key path, what is
    /// watched of the objects it links to.
    struct Entry: Hashable {
        let index: Int
        let linked: Watch?
    }

    /// How far realm-core follows links for collection notifications by default.
    static let collectionDefault = Watch.everything(depth: 4)

    /// The watch for `keyPaths` (property names joined by dots) on `schema`; nil key paths
    /// (or none) watch `otherwise`.
    ///
    /// Traps on a key path that names no property, or goes on after one that is not a link,
    /// as Realm throws for them.
    static func of(_ keyPaths: [String]?, in schema: ObjectSchema, otherwise: Watch) -> Watch {
        guard let keyPaths, !keyPaths.isEmpty else { return otherwise }
        var watch = Watch.properties([])
        for keyPath in keyPaths {
            watch.add(keyPath.split(separator: ".").map(String.init), keyPath, in: schema)
        }
        return watch
    }

    private mutating func add(_ components: [String], _ keyPath: String, in schema: ObjectSchema) {
        guard case .properties(var entries) = self, let name = components.first else { return }
        guard let property = schema.property(named: name), !property.isHidden else {
            misuse("Property '\(name)' in KeyPath '\(keyPath)' is not a valid property in \(schema.className).")
        }
        let rest = Array(components.dropFirst())
        // "a" and "a.b" together watch both, in either order.
        var linked = entries.first { $0.index == property.index }?.linked
        if !rest.isEmpty {
            guard let target = property.linkTarget else {
                misuse("Property '\(name)' in KeyPath '\(keyPath)' is not a collection of objects or an object reference, "
                       + "so it cannot be used as an intermediate keypath.")
            }
            // The classes a change can touch are found from the model classes (`classes(from:)`).
            ensure(!schema.isStored, "Key path '\(keyPath)' of a DynamicObject goes through a link: notifications of dynamic "
                   + "objects watch their own properties only")
            let targetSchema: ObjectSchema
            do { targetSchema = try ObjectSchema.of(target) } catch { misuse("\(error)") }
            var nested = linked ?? .properties([])
            nested.add(rest, keyPath, in: targetSchema)
            linked = nested
        }
        entries.removeAll { $0.index == property.index }
        entries.append(Entry(index: property.index, linked: linked))
        self = .properties(entries)
    }

    /// The watched properties, by index (all properties a change can be seen in for
    /// `everything`).
    func propertyIndexes(in schema: ObjectSchema) -> [Int] {
        switch self {
        case .everything: return schema.allProperties.filter { $0.isStored && !$0.isHidden }.map(\.index)
        case .properties(let entries): return entries.map(\.index)
        }
    }

    /// The classes whose changes can matter: `type` and the classes linked to along the
    /// watched paths.
    func classes(from type: Object.Type) -> [Object.Type] {
        var found: [ObjectIdentifier: Object.Type] = [:]
        collect(type, &found)
        return Array(found.values)
    }

    private func collect(_ type: Object.Type, _ found: inout [ObjectIdentifier: Object.Type]) {
        found[ObjectIdentifier(type)] = type
        guard let schema = try? ObjectSchema.of(type) else { return }
        switch self {
        case .everything(let depth):
            guard depth > 0 else { return }
            for property in schema.allProperties where property.isStored {
                if let target = property.linkTarget { Watch.everything(depth: depth - 1).collect(target, &found) }
            }
        case .properties(let entries):
            for entry in entries {
                guard let linked = entry.linked, let target = schema.allProperties[entry.index].linkTarget else { continue }
                linked.collect(target, &found)
            }
        }
    }
}

/// The classes a query over `type` can read: `type` and every class reachable from it through
/// links and linking objects (a predicate or a sort may follow any of them).
func reachableClasses(from type: Object.Type) -> [Object.Type] {
    var found: [ObjectIdentifier: Object.Type] = [:]
    var pending = [type]
    while let next = pending.popLast() {
        guard found[ObjectIdentifier(next)] == nil else { continue }
        found[ObjectIdentifier(next)] = next
        guard let schema = try? ObjectSchema.of(next) else { continue }
        pending += schema.allProperties.compactMap(\.linkTarget)
    }
    return Array(found.values)
}

/// Answers "was this object modified, as the observation counts it?" for one delivery.
final class ChangeChecker {
    let changes: ChangeSet
    let realm: Realm
    /// `everything` answers per table and key: objects linked from many others are checked
    /// once per depth.
    private var answers: [TableKey: [ObjectKey: Answer]] = [:]
    /// Per origin table and link column, the objects linking to each object.
    private var origins: [OriginColumn: [ObjectKey: [ObjectKey]]] = [:]
    /// Per class and watch, whether a change can be seen from there (`changesReachable`).
    private var reachable: [Reach: Bool] = [:]

    /// What is known of an object for `everything`. Looking further can only find more: found
    /// modified within some depth, it is within any greater one; found unmodified within
    /// some depth, it is within any smaller one.
    private struct Answer {
        var modifiedWithin: Int?
        var unmodifiedWithin: Int?

        func modified(within depth: Int) -> Bool? {
            if let known = modifiedWithin, known <= depth { return true }
            if let known = unmodifiedWithin, known >= depth { return false }
            return nil
        }

        mutating func record(_ modified: Bool, within depth: Int) {
            if modified {
                modifiedWithin = min(modifiedWithin ?? depth, depth)
            } else {
                unmodifiedWithin = max(unmodifiedWithin ?? depth, depth)
            }
        }
    }

    private struct OriginColumn: Hashable {
        let table: TableKey
        let column: ColumnKey
    }

    private struct Reach: Hashable {
        let type: ObjectIdentifier
        let watch: Watch
    }

    init(_ changes: ChangeSet, _ realm: Realm) {
        self.changes = changes
        self.realm = realm
    }

    /// Whether any of `classes` has changes.
    func touches(_ classes: [Object.Type]) -> Bool {
        classes.contains { type in
            guard let binding = try? realm.binding(for: type) else { return false }
            return changes.tables[binding.table].map { !$0.isEmpty } ?? false
        }
    }

    func isModified(_ binding: TableBinding, _ key: ObjectKey, _ watch: Watch) -> Bool {
        let table = changes.tables[binding.table]
        switch watch {
        case .everything(let depth):
            if table?.modified.contains(key.value) == true { return true }
            guard depth > 0 else { return false }
            if let known = answers[binding.table]?[key]?.modified(within: depth) { return known }
            let modified = binding.schema.allProperties.contains { property in
                property.isStored && property.linkTarget != nil
                    && linkedObjectIsModified(binding, key, property, .everything(depth: depth - 1))
            }
            answers[binding.table, default: [:]][key, default: Answer()].record(modified, within: depth)
            return modified
        case .properties(let entries):
            for entry in entries {
                let property = binding.schema.allProperties[entry.index]
                if let table, table.modified.contains(key.value), columnWasSet(binding, property, table) { return true }
                if let linked = entry.linked, linkedObjectIsModified(binding, key, property, linked) { return true }
            }
            return false
        }
    }

    /// Whether a column of `property` was set on some object of the table.
    func columnWasSet(_ binding: TableBinding, _ property: PropertySchema, _ table: TableChanges) -> Bool {
        if property.isComputed { return false }
        if table.modifiedColumns.contains(binding.columns[property.index].index) { return true }
        guard let keys = property.mapKeysIndex else { return false }
        return table.modifiedColumns.contains(binding.columns[keys].index)
    }

    /// Whether `type`, or a class `watch` reaches from it through links, has changes: only
    /// then can an object of `type` be modified for `watch` (a change two links away modifies
    /// the object between even when its own class did not change).
    func changesReachable(from type: Object.Type, _ watch: Watch) -> Bool {
        let slot = Reach(type: ObjectIdentifier(type), watch: watch)
        if let known = reachable[slot] { return known }
        let found = touches(watch.classes(from: type))
        reachable[slot] = found
        return found
    }

    /// Whether an object that `key` links to through `property` is modified for `watch`.
    func linkedObjectIsModified(_ binding: TableBinding, _ key: ObjectKey, _ property: PropertySchema, _ watch: Watch) -> Bool {
        guard let target = property.linkTarget, changesReachable(from: target, watch),
              let targetBinding = try? realm.binding(for: target) else { return false }
        return linkedKeys(binding, key, property).contains { isModified(targetBinding, $0, watch) }
    }

    /// The objects `key` links to through `property`, at the realm's current state.
    func linkedKeys(_ binding: TableBinding, _ key: ObjectKey, _ property: PropertySchema) -> [ObjectKey] {
        do {
            if property.isComputed { return originKeys(binding, key, property) }
            guard let row = try realm.tableView(binding.table).row(key) else { return [] }
            let column = binding.columns[property.index]
            let values = property.isList ? try row.list(column) : [try row.value(column)]
            return values.compactMap { if case .link(let linked) = $0 { linked } else { nil } }
        } catch {
            return []
        }
    }

    /// For a `LinkingObjects` property: the objects whose origin property links to `key`.
    private func originKeys(_ binding: TableBinding, _ key: ObjectKey, _ property: PropertySchema) -> [ObjectKey] {
        guard let origin = property.linkTarget, let originBinding = try? realm.binding(for: origin),
              let link = originBinding.schema.property(named: property.originProperty ?? "") else { return [] }
        let slot = OriginColumn(table: originBinding.table, column: originBinding.columns[link.index])
        if let known = origins[slot] { return known[key] ?? [] }
        let found = linkingObjects(through: link, slot)
        origins[slot] = found
        return found[key] ?? []
    }

    /// Every object's linking objects through the link column `slot` (`link`): one read of
    /// the origin table.
    private func linkingObjects(through link: PropertySchema, _ slot: OriginColumn) -> [ObjectKey: [ObjectKey]] {
        var found: [ObjectKey: [ObjectKey]] = [:]
        try? engine { () throws(StorageError) in
            try realm.tableView(slot.table).forEachRow { (row) throws(StorageError) -> Bool in
                let values = link.isList ? try row.list(slot.column) : [try row.value(slot.column)]
                for case .link(let target) in values where found[target]?.last != row.key {
                    found[target, default: []].append(row.key)
                }
                return true
            }
        }
        return found
    }
}
