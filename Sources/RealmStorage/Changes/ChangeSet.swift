// Change sets: what each commit changed, per table, kept in the file so that any reader can
// ask "what changed between my version and a newer one" for as long as it holds its version.
//
// Node (kind changeSet):
//   16  4   table count, then per table:
//             u32 table key, key ranges inserted, deleted, modified,
//             u32 column count, u32 × count modified column indices
//   key ranges: u32 n, then n × (i64 first, i64 last)
//
// The top node of version V lists the change sets of every version after the oldest pinned
// one (Catalog.swift); older entries are dropped and their nodes freed by the commit.

/// The changes to one table.
package struct TableChanges: Equatable, Sendable {
    package var inserted = KeyRanges()
    package var deleted = KeyRanges()
    /// Objects that existed before and after and had a column set.
    package var modified = KeyRanges()
    package var modifiedColumns: Set<Int> = []

    package init() {}

    package var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && modified.isEmpty && modifiedColumns.isEmpty }

    /// The objects inserted, deleted or modified (the three sets are disjoint).
    var rowCount: Int { inserted.count + deleted.count + modified.count }

    mutating func recordInsert(_ key: Int64) { inserted.insert(key) }

    mutating func recordDelete(_ key: Int64) {
        if inserted.contains(key) {
            inserted.remove(key)
        } else {
            modified.remove(key)
            deleted.insert(key)
        }
    }

    mutating func recordModify(_ key: Int64, column: Int) {
        modifiedColumns.insert(column)
        if !inserted.contains(key) { modified.insert(key) }
    }

    /// These changes followed by `later`.
    package mutating func append(_ later: TableChanges) {
        for key in later.deleted { recordDelete(key) }
        for key in later.inserted { inserted.insert(key) }
        for key in later.modified where !inserted.contains(key) { modified.insert(key) }
        modifiedColumns.formUnion(later.modifiedColumns)
    }
}

/// The changes of one commit, or of a range of commits.
package struct ChangeSet: Equatable, Sendable {
    package var tables: [TableKey: TableChanges] = [:]

    package init() {}

    package var isEmpty: Bool { tables.values.allSatisfy(\.isEmpty) }

    package mutating func append(_ later: ChangeSet) {
        for (key, changes) in later.tables { tables[key, default: TableChanges()].append(changes) }
    }

    package func encoded(version: VersionID) -> [UInt8] {
        var w = NodeWriter()
        let entries = tables.filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }
        w.u32(UInt32(entries.count))
        for (key, changes) in entries {
            w.u32(key.value)
            changes.inserted.write(to: &w)
            changes.deleted.write(to: &w)
            changes.modified.write(to: &w)
            w.u32(UInt32(changes.modifiedColumns.count))
            for c in changes.modifiedColumns.sorted() { w.u32(UInt32(c)) }
        }
        return w.finish(kind: .changeSet, version: version)
    }

    package static func decode(_ node: NodeView) throws(StorageError) -> ChangeSet {
        var r = node.reader()
        var result = ChangeSet()
        let n = try r.count(elementSize: 20)
        for _ in 0..<n {
            let key = TableKey(try r.u32())
            var changes = TableChanges()
            changes.inserted = try KeyRanges.read(&r)
            changes.deleted = try KeyRanges.read(&r)
            changes.modified = try KeyRanges.read(&r)
            let columns = try r.count(elementSize: 4)
            for _ in 0..<columns { changes.modifiedColumns.insert(Int(try r.u32())) }
            result.tables[key] = changes
        }
        return result
    }
}
