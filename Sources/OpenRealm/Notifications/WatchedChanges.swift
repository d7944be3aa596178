import RealmStorage

// Which objects count as modified for an observation with key paths, found from the change
// sets and a few reads, without keeping any watched value between deliveries (issue 27).
//
// ChangeChecker.swift states the rule. With key paths an object of the observed class counts
// as modified when
//
//   1. one of its own watched properties changed. Only objects the change set marks modified
//      in its table can have such a change (an insertion or a deletion is reported as such;
//      a link cleared because its target was deleted is recorded as a modification of the
//      object holding it), so only those are read: their watched values at the anchor (the
//      version the observation's snapshot was taken at, pinned and readable) and now, and
//      compared. k modified objects cost 2k row reads, whatever the size of the result;
//   2. along a watched key path through a link ("owner.rank"), a linked object counts as
//      modified for the rest of the path. Those are found backwards, from the changed side:
//        a. the objects of the linked class that count: its change set's modified objects
//           when a column watched there was set in the commit (the change sets keep columns
//           per table), and for a longer path ("owner.pet.name") the objects of that class
//           linking on to counted ones, found the same way;
//        b. the objects linking to those: through linking objects (`LinkingObjects`), the
//           counted objects' own links, a row read each; through a stored link, list, set or
//           map, the file keeps no backlinks, so one scan of that link column of the linking
//           class: a to-one link reads each leaf's block of integers (about a nanosecond an
//           object, nothing decoded or kept), a list, set or map reads each object's list.
//      Links are read at the current version, as ChangeChecker reads them for the full
//      comparison. A commit that changed no linked class, or none in a watched column, reads
//      nothing here.
//
// Where the anchor cannot be read (brought there as a write began on a commit whose group sync
// was still running: `ChangeSource.readableVersion`, RealmNotifier.swift), old values are
// unknown: the full comparison then counts a modified object when a watched column was set in
// its table, the rule it applies to linked objects (`ChangeChecker.isModified`).

/// The objects of one class that count as modified for a watch with key paths, over one
/// delivery's changes (see the top of this file).
struct WatchedChanges {
    /// Objects the change set marks modified whose watched values differ between the anchor
    /// and now.
    var changedValues: Set<ObjectKey> = []
    /// Objects that count through a watched link (the linking objects of 2b).
    var throughLinks: Set<ObjectKey> = []

    func isModified(_ key: ObjectKey) -> Bool { changedValues.contains(key) || throughLinks.contains(key) }

    /// Reads what `changes` made count as modified among `binding`'s objects for the watch
    /// `entries`; nil when the change sets cannot say (a link path watching everything
    /// further on). `anchor`: the version the values were last seen at, read with the same
    /// table binding as now.
    init?(_ entries: [Watch.Entry], _ binding: TableBinding, _ changes: ChangeSet, anchor: ReadTransaction,
          in realm: Realm) throws(StorageError) {
        let reader = WatchedChangeReader(changes: changes, realm: realm)
        changedValues = try reader.changedValues(binding, entries.map(\.index), anchor: anchor)
        guard let linked = try reader.linkingToCounted(binding, entries) else { return nil }
        throughLinks = linked
    }

    /// Whether `changes` can make an object count through a watched link: a class on a
    /// watched path changed in a column watched there (read from the change sets alone, so
    /// it may say yes where the objects linking to those changed are outside the result).
    static func linksMayCount(_ entries: [Watch.Entry], _ binding: TableBinding, _ changes: ChangeSet, in realm: Realm) -> Bool {
        entries.contains { entry in
            guard let linked = entry.linked else { return false }
            guard case .properties(let nested) = linked else { return true }
            guard let target = binding.schema.allProperties[entry.index].linkTarget,
                  let targetBinding = try? realm.binding(for: target) else { return false }
            let checker = ChangeChecker(changes, realm)
            if let table = changes.tables[targetBinding.table],
               nested.contains(where: { checker.columnWasSet(targetBinding, targetBinding.schema.allProperties[$0.index], table) }) {
                return true
            }
            return linksMayCount(nested, targetBinding, changes, in: realm)
        }
    }
}

/// Reads one delivery's watched changes (see the top of this file).
struct WatchedChangeReader {
    let changes: ChangeSet
    let realm: Realm

    /// The objects of `binding`'s table the change set marks modified whose properties
    /// `indexes` hold other values now than at `anchor` (1).
    func changedValues(_ binding: TableBinding, _ indexes: [Int], anchor: ReadTransaction) throws(StorageError) -> Set<ObjectKey> {
        guard let table = changes.tables[binding.table], !table.modified.isEmpty else { return [] }
        let properties = WatchedProperties(binding: binding, indexes: indexes)
        let old = try anchor.table(binding.table), now = try realm.tableView(binding.table)
        var changed = Set<ObjectKey>()
        for value in table.modified {
            let key = ObjectKey(value)
            // Modified objects exist at both versions; one that does not is not what was seen.
            guard let before = try old.row(key), let after = try now.row(key) else {
                changed.insert(key)
                continue
            }
            if try properties.states(of: before) != properties.states(of: after) { changed.insert(key) }
        }
        return changed
    }

    /// The objects of `binding`'s table that link, along one of the watched links of
    /// `entries`, to an object that counts as modified for the rest of the path (2); nil when
    /// the change sets cannot say.
    func linkingToCounted(_ binding: TableBinding, _ entries: [Watch.Entry]) throws(StorageError) -> Set<ObjectKey>? {
        var found = Set<ObjectKey>()
        for entry in entries {
            guard let linked = entry.linked else { continue }
            guard case .properties(let nested) = linked else { return nil }
            let property = binding.schema.allProperties[entry.index]
            guard let target = property.linkTarget else { continue }
            guard let targetBinding = try? realm.binding(for: target) else { return nil }
            // Its class may be unchanged while a class further along the path changed.
            let table = changes.tables[targetBinding.table] ?? TableChanges()
            guard let counted = try counted(targetBinding, nested, table) else { return nil }
            guard !counted.isEmpty else { continue }
            if property.isComputed {
                guard let link = targetBinding.schema.property(named: property.originProperty ?? "") else { return nil }
                try linkedFrom(counted, targetBinding, link, into: &found)
            } else {
                try linking(binding, property, to: Set(counted.map(\.value)), into: &found)
            }
        }
        return found
    }

    /// The objects of `binding`'s table (whose changes are `table`) that count as modified for
    /// the watch `entries` by the change-set rule (2a).
    private func counted(_ binding: TableBinding, _ entries: [Watch.Entry], _ table: TableChanges) throws(StorageError) -> Set<ObjectKey>? {
        let checker = ChangeChecker(changes, realm)
        var found = Set<ObjectKey>()
        if entries.contains(where: { checker.columnWasSet(binding, binding.schema.allProperties[$0.index], table) }) {
            for value in table.modified { found.insert(ObjectKey(value)) }
        }
        guard let further = try linkingToCounted(binding, entries) else { return nil }
        return found.union(further)
    }

    /// Adds the objects that `origins` (of `originBinding`'s table) link to through `link`:
    /// the objects whose linking objects include them (2b, `LinkingObjects`).
    private func linkedFrom(_ origins: Set<ObjectKey>, _ originBinding: TableBinding, _ link: PropertySchema,
                            into found: inout Set<ObjectKey>) throws(StorageError) {
        let view = try realm.tableView(originBinding.table)
        let column = originBinding.columns[link.index]
        for origin in origins {
            guard let row = try view.row(origin) else { continue }
            let values = link.isList ? try row.list(column) : [try row.value(column)]
            for case .link(let key) in values { found.insert(key) }
        }
    }

    /// Adds the objects of `binding`'s table whose link `property` (a link, list, set or map
    /// of objects) holds one of `targets`: one scan of that column (2b).
    private func linking(_ binding: TableBinding, _ property: PropertySchema, to targets: Set<Int64>,
                         into found: inout Set<ObjectKey>) throws(StorageError) {
        let view = try realm.tableView(binding.table)
        let column = binding.columns[property.index]
        guard !property.isList else {
            try view.forEachRow { (row) throws(StorageError) -> Bool in
                for case .link(let key) in try row.list(column) where targets.contains(key.value) {
                    found.insert(row.key)
                    break
                }
                return true
            }
            return
        }
        try view.forEachLeaf { (leaf) throws(StorageError) -> Bool in
            switch try leaf.column(column) {
            case .block(let block):
                let links = block.integers
                for i in 0..<leaf.count where targets.contains(links[i]) && !block.isNull(i) { found.insert(leaf.key(i)) }
            case .values(let values):
                for (i, value) in values.enumerated() {
                    if case .link(let key) = value, targets.contains(key.value) { found.insert(leaf.key(i)) }
                }
            case .uniform(let value):
                if case .link(let key) = value, targets.contains(key.value) {
                    for i in 0..<leaf.count { found.insert(leaf.key(i)) }
                }
            }
            return true
        }
    }
}
