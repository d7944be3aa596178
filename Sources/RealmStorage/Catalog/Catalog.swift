// The top node: the root of one version. It names every table (with its columns, cluster
// tree root and index roots), the schema blob of the layer above, and the change history
// still needed by pinned readers. It is small and rewritten by every commit.
//
//   offset  size  field
//   0       16    node header (kind top)
//   16      8     version
//   24      8     schema blob ref (0 = none)
//   32      4     next table key
//   36      4     table count, then per table:
//                   u32 table key, string name, u64 cluster root, i64 next object key,
//                   u32 column count, then per column:
//                     string name, u8 type, u8 flags, u32 link target (0xFFFFFFFF = none),
//                     u64 index root (0 = not indexed)
//   ...     4     history count, then per entry: u64 from version, u64 to version,
//                 u64 change set ref (0 = nothing changed)
//
// Strings are a u32 byte length followed by UTF-8 bytes. Column flags: 1 nullable, 2 list,
// 4 indexed, 8 unique, 16 removed, 32 object key (the value is the object's key), 64 set (a
// list holding a set; a reader that does not know the flag reads the list unchanged).
//
// With node flag 0x80 (`SealedRefs.flag`; format 6, encrypted files) every ref above (schema
// blob, cluster root, index root, change set ref) is followed by a u64: its node's seal
// (NodeSealing.swift, S5; 0 with a ref of 0).

/// One table as the catalogue records it.
package struct TableInfo: Sendable, Equatable {
    package var key: TableKey
    package var name: String
    package var columns: [ColumnSpec]
    package var clusterRoot: Ref
    /// Per column: the index root, `.none` when the column is not indexed (or the index is
    /// still empty and unwritten).
    package var indexRoots: [Ref]
    /// Keys handed out by `insert` without an explicit key start here and only grow.
    package var nextObjectKey: Int64

    package init(key: TableKey, name: String, columns: [ColumnSpec]) {
        self.key = key
        self.name = name
        self.columns = columns
        self.clusterRoot = .none
        self.indexRoots = Array(repeating: .none, count: columns.count)
        self.nextObjectKey = 0
    }

    /// The column named `name`, skipping removed ones.
    package func column(named name: String) -> ColumnKey? {
        columns.firstIndex { $0.name == name && !$0.removed }.map(ColumnKey.init)
    }
}

/// One entry of the change history: what changed after version `from` up to and including
/// `version` (one commit, or several merged where no reader needs the versions between).
package struct HistoryEntry: Sendable, Equatable {
    package var from: VersionID
    package var version: VersionID
    package var ref: Ref
}

/// The decoded top node of one version.
package struct TopState: Sendable {
    package var version: VersionID
    package var schemaBlob: Ref
    package var nextTableKey: UInt32
    package var tables: [TableInfo]
    package var history: [HistoryEntry]

    package static func empty(version: VersionID) -> TopState {
        TopState(version: version, schemaBlob: .none, nextTableKey: 1, tables: [], history: [])
    }

    package func table(_ key: TableKey) -> TableInfo? { tables.first { $0.key == key } }
    package func table(named name: String) -> TableInfo? { tables.first { $0.name == name } }

    /// The node's bytes; `sealed`: the file stores seals (see above).
    package func encoded(sealed: Bool) -> [UInt8] {
        var w = NodeWriter(capacity: 256 + tables.count * 256)
        func ref(_ ref: Ref) {
            w.u64(ref.offset)
            if sealed { w.u64(ref.seal) }
        }
        w.u64(version.value)
        ref(schemaBlob)
        w.u32(nextTableKey)
        w.u32(UInt32(tables.count))
        for table in tables {
            w.u32(table.key.value)
            w.string(table.name)
            ref(table.clusterRoot)
            w.i64(table.nextObjectKey)
            w.u32(UInt32(table.columns.count))
            for (c, column) in table.columns.enumerated() {
                w.string(column.name)
                w.u8(column.type.rawValue)
                var flags: UInt8 = 0
                if column.nullable { flags |= 1 }
                if column.isList { flags |= 2 }
                if column.indexed { flags |= 4 }
                if column.unique { flags |= 8 }
                if column.removed { flags |= 16 }
                if column.isObjectKey { flags |= 32 }
                if column.isSet { flags |= 64 }
                w.u8(flags)
                w.u32(column.linkTarget?.value ?? UInt32.max)
                ref(table.indexRoots[c])
            }
        }
        w.u32(UInt32(history.count))
        for entry in history {
            w.u64(entry.from.value)
            w.u64(entry.version.value)
            ref(entry.ref)
        }
        return w.finish(kind: .top, version: version, flags: sealed ? SealedRefs.flag : 0)
    }

    package static func decode(_ node: NodeView) throws(StorageError) -> TopState {
        var r = node.reader()
        let sealed = node.flags & SealedRefs.flag != 0
        func ref() throws(StorageError) -> Ref {
            let offset = try r.u64()
            return sealed ? Ref(offset, seal: try r.u64()) : Ref(offset)
        }
        let version = VersionID(try r.u64())
        let schemaBlob = try ref()
        let nextTableKey = try r.u32()
        let tableCount = try r.count(elementSize: 28)
        var tables = [TableInfo]()
        tables.reserveCapacity(tableCount)
        for _ in 0..<tableCount {
            let key = TableKey(try r.u32())
            let name = try r.string()
            let root = try ref()
            let nextKey = try r.i64()
            let columnCount = try r.count(elementSize: 18)
            var columns = [ColumnSpec]()
            var indexRoots = [Ref]()
            for _ in 0..<columnCount {
                let columnName = try r.string()
                let typeByte = try r.u8()
                guard let type = ColumnType(rawValue: typeByte) else {
                    throw StorageError(.fileCorrupted, "table \(name): column \(columnName) has unknown type \(typeByte)")
                }
                let flags = try r.u8()
                let target = try r.u32()
                var spec = ColumnSpec(name: columnName, type: type, nullable: flags & 1 != 0, isList: flags & 2 != 0,
                                      indexed: flags & 4 != 0, unique: flags & 8 != 0,
                                      linkTarget: target == UInt32.max ? nil : TableKey(target))
                spec.nullable = flags & 1 != 0
                spec.removed = flags & 16 != 0
                spec.isObjectKey = flags & 32 != 0
                spec.isSet = flags & 64 != 0 && spec.isList
                guard !spec.isObjectKey || (type == .int && !spec.nullable && !spec.isList && !spec.indexed) else {
                    throw StorageError(.fileCorrupted, "table \(name): column \(columnName) cannot hold object keys")
                }
                columns.append(spec)
                indexRoots.append(try ref())
            }
            var info = TableInfo(key: key, name: name, columns: columns)
            info.clusterRoot = root
            info.indexRoots = indexRoots
            info.nextObjectKey = nextKey
            tables.append(info)
        }
        let historyCount = try r.count(elementSize: 24)
        var history = [HistoryEntry]()
        for _ in 0..<historyCount {
            let entry = HistoryEntry(from: VersionID(try r.u64()), version: VersionID(try r.u64()), ref: try ref())
            guard entry.from < entry.version, entry.version <= version, history.last.map({ $0.version == entry.from }) ?? true else {
                throw StorageError(.fileCorrupted, "top node of \(version): change history out of order")
            }
            history.append(entry)
        }
        return TopState(version: version, schemaBlob: schemaBlob, nextTableKey: nextTableKey, tables: tables, history: history)
    }
}

/// Opaque bytes stored for the layer above (its schema description).
package enum BlobNode {
    package static func encode(_ bytes: [UInt8], version: VersionID) -> [UInt8] {
        var w = NodeWriter(capacity: bytes.count + 32)
        w.lengthPrefixed(bytes)
        return w.finish(kind: .blob, version: version)
    }

    package static func decode(_ node: NodeView) throws(StorageError) -> [UInt8] {
        var r = node.reader()
        return try r.bytes()
    }
}
