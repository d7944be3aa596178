// Links never point at deleted objects.
//
// Deleting an object records its key when some column (a single link or a list of links) can
// point at its table, or when some mixed column exists (a mixed value may link to any table). Before the transaction commits, each table with such columns is scanned
// once and every link to a deleted object is cleared: a single link becomes null, a list loses
// the entries. The changes are recorded like any other modification, so observers see the
// linking objects as modified. One scan per linking table per commit keeps bulk deletes
// linear; tables nothing links to cost nothing.

extension WriteTransaction {
    /// Remembers a deleted object if links can point at its table.
    func noteDeleted(_ table: TableKey, _ key: ObjectKey) {
        // Undoing an insert deletes what was not there: no link to it existed before.
        guard !isUndoing else { return }
        guard top.tables.contains(where: { $0.columns.contains { !$0.removed && ($0.linkTarget == table || $0.type == .mixed) } }) else { return }
        deletedLinkTargets[table, default: []].insert(key.value)
    }

    /// Clears every link to an object deleted in this transaction.
    func clearLinksToDeletedObjects() throws(StorageError) {
        guard !deletedLinkTargets.isEmpty else { return }
        let deleted = deletedLinkTargets
        deletedLinkTargets = [:]
        for origin in top.tables {
            let linkColumns = origin.columns.indices.filter { c in
                let spec = origin.columns[c]
                return !spec.removed && (spec.type == .mixed || (spec.type == .link && spec.linkTarget.map { deleted[$0] != nil } == true))
            }
            guard !linkColumns.isEmpty else { continue }
            var singles: [(ObjectKey, ColumnKey)] = []
            var lists: [(ObjectKey, ColumnKey, [Value])] = []
            try table(origin.key).forEachRow { (row) throws(StorageError) -> Bool in
                for c in linkColumns {
                    let target = origin.columns[c].linkTarget
                    func isGone(_ value: Value) -> Bool {
                        switch value {
                        case .link(let k): return deleted[target!]!.contains(k.value)
                        case .typedLink(let t, let k): return deleted[t]?.contains(k.value) ?? false
                        default: return false
                        }
                    }
                    if origin.columns[c].isList {
                        let elements = try row.list(ColumnKey(c))
                        let kept = elements.filter { !isGone($0) }
                        if kept.count != elements.count { lists.append((row.key, ColumnKey(c), kept)) }
                    } else if isGone(try row.value(ColumnKey(c))) {
                        singles.append((row.key, ColumnKey(c)))
                    }
                }
                return true
            }
            for (key, column) in singles { try set(origin.key, key, column, .null) }
            for (key, column, kept) in lists { try setList(origin.key, key, column, kept) }
        }
    }
}
