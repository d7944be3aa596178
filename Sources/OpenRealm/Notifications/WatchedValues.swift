import RealmStorage

// The values of watched properties, compared between two versions.
//
// The change sets say per table which objects were modified and which columns were set, for
// the whole table, not per object. With key paths an object counts as modified only when a
// watched property changed, so observations with key paths compare the values of the watched
// properties: a column set on one object in a commit does not make another object of the
// table count. Observations of one object, and of lists, sets, maps and linking objects, keep
// those values in their snapshots (an object's few properties, a list's elements); observed
// results keep none, and read the values of the objects the change sets mark modified at the
// anchor and now (WatchedChanges.swift), so that a delivery costs what changed. Further along
// a key path, through a link, the linked objects are judged by the change sets
// (ChangeChecker.swift).

/// The value of one watched property in a snapshot.
enum PropertyState: Equatable {
    case value(Value)
    /// A list, set or map (a map's keys, then its values).
    case collection([Value])
    /// A `LinkingObjects` property: followed for key paths through it, not compared.
    case computed
}

/// The values of some properties of a class's objects, as snapshots keep them.
struct WatchedProperties {
    let binding: TableBinding
    /// The properties, by index.
    let indexes: [Int]

    /// The values of `key`'s properties now; nil when the object is not there.
    func states(of key: ObjectKey, in realm: Realm) -> [PropertyState]? {
        do {
            guard let row = try realm.tableView(binding.table).row(key) else { return nil }
            return try states(of: row)
        } catch {
            return nil
        }
    }

    /// The values of the objects `keys` now, by key (those not there are left out).
    func states(of keys: some Sequence<ObjectKey>, in realm: Realm) -> [ObjectKey: [PropertyState]] {
        var states: [ObjectKey: [PropertyState]] = [:]
        guard let view = try? realm.tableView(binding.table) else { return states }
        for key in keys where states[key] == nil {
            if let row = try? view.row(key), let values = try? self.states(of: row) { states[key] = values }
        }
        return states
    }

    /// The values of `row`'s properties, at the version it was read at.
    func states(of row: Row) throws(StorageError) -> [PropertyState] {
        try indexes.map { (index) throws(StorageError) -> PropertyState in
            let property = binding.schema.allProperties[index]
            if property.isComputed { return .computed }
            let column = binding.columns[index]
            guard property.isList else { return .value(try row.value(column)) }
            let keys = try property.mapKeysIndex.map { (keys) throws(StorageError) in try row.list(binding.columns[keys]) } ?? []
            return .collection(keys + (try row.list(column)))
        }
    }
}

extension Watch {
    /// The properties a snapshot keeps the values of: those key paths name; none when every
    /// property is watched (the change sets alone decide then, as realm-core does).
    var comparedIndexes: [Int]? {
        guard case .properties(let entries) = self else { return nil }
        return entries.map(\.index)
    }

    /// Whether `key`, whose watched values were `old` and are `new` (nil: not read), counts
    /// as modified: a watched value differs, or along a key path through a link, a linked
    /// object counts as modified for the rest of the path.
    func isModified(_ binding: TableBinding, _ key: ObjectKey, old: [PropertyState]?, new: [PropertyState]?,
                    _ checker: ChangeChecker) -> Bool {
        guard case .properties(let entries) = self, let old, let new else { return checker.isModified(binding, key, self) }
        if old != new { return true }
        return entries.contains { entry in
            guard let linked = entry.linked else { return false }
            return checker.linkedObjectIsModified(binding, key, binding.schema.allProperties[entry.index], linked)
        }
    }

    /// Whether `key` counts as modified, given the objects of its table whose watched values
    /// differ between the anchor and now (`changedValues`, WatchedChanges.swift; nil when the
    /// old values cannot be read: then the change sets' rule decides, a watched column set in
    /// the table), or along a key path through a link, a linked object counts as modified.
    func isModified(_ binding: TableBinding, _ key: ObjectKey, changedValues: Set<ObjectKey>?, _ checker: ChangeChecker) -> Bool {
        guard case .properties(let entries) = self, let changedValues else { return checker.isModified(binding, key, self) }
        if changedValues.contains(key) { return true }
        return entries.contains { entry in
            guard let linked = entry.linked else { return false }
            return checker.linkedObjectIsModified(binding, key, binding.schema.allProperties[entry.index], linked)
        }
    }
}
