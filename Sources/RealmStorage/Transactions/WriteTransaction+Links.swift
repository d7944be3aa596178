// Links never point at deleted objects.
//
// Deleting an object records its key when some column (a single link or a list of links) can
// point at its table. Before the transaction commits, each table with such columns is scanned
// once and every link to a deleted object is cleared: a single link becomes null, a list loses
// the entries. The changes are recorded like any other modification, so observers see the
// linking objects as modified. One scan per linking table per commit keeps bulk deletes
// linear; tables nothing links to cost nothing.

extension WriteTransaction {
    /// Remembers a deleted object if links can point at its table.
    func noteDeleted(_ table: TableKey, _ key: ObjectKey) {
        guard top.tables.contains(where: { $0.columns.contains { !$0.removed && $0.linkTarget == table } }) else { return }
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
                return !spec.removed && spec.type == .link && spec.linkTarget.map { deleted[$0] != nil } == true
            }
            guard !linkColumns.isEmpty else { continue }
            var singles: [(ObjectKey, ColumnKey)] = []
            var lists: [(ObjectKey, ColumnKey, [Value])] = []
            try table(origin.key).forEachRow { (row) throws(StorageError) -> Bool in
                for c in linkColumns {
                    let gone = deleted[origin.columns[c].linkTarget!]!
                    if origin.columns[c].isList {
                        let elements = try row.list(ColumnKey(c))
                        let kept = elements.filter { if case .link(let k) = $0 { return !gone.contains(k.value) } else { return true } }
                        if kept.count != elements.count { lists.append((row.key, ColumnKey(c), kept)) }
                    } else if case .link(let k) = try row.value(ColumnKey(c)), gone.contains(k.value) {
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
