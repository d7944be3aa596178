#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Compacting copies: one version written into a new file that holds only what that version
// reaches, packed from the header on, with an empty free list and no change history. This is
// what `writeCopy` and compaction build on.
//
// The copy is written under a temporary name, synced, then linked into place and the
// directory synced, so the destination either does not exist or is a complete realm file.

extension Store {
    /// Writes the newest version, compacted, to a new file at `path`.
    ///
    /// - Throws: `fileExists`-style `invalidArgument` when `path` exists, I/O errors.
    package func writeCompactedCopy(to path: String) throws(StorageError) {
        try beginRead().writeCompactedCopy(to: path)
    }
}

extension ReadTransaction {
    /// Writes this version, compacted, to a new file at `path`.
    package func writeCompactedCopy(to path: String) throws(StorageError) {
        guard access(path, F_OK) != 0 else {
            throw StorageError(.invalidArgument, "a file already exists at the destination; choose a new path or delete it first", path: path)
        }
        let version = VersionID(1)
        let writer = CommitWriter(version: version, free: FreeSpace(extents: [], logicalSize: UInt64(FileHeader.size)))
        var copy = top
        copy.version = version
        copy.history = []
        for (t, info) in top.tables.enumerated() {
            let tableContext = context.with(columns: info.columns)
            if !info.clusterRoot.isNone {
                copy.tables[t].clusterRoot = try Self.copyTree(ClusterFormat.self, info.clusterRoot, tableContext, writer) { (leaf) throws(StorageError) in
                    // Lists are copied with their leaf: read them from this file now.
                    for (c, spec) in info.columns.enumerated() where spec.isList && !spec.removed {
                        for i in leaf.lists[c].indices {
                            if case .clean(let ref) = leaf.lists[c][i] {
                                leaf.setList(ref.isNone ? .clean(.none) : .dirty(try ClusterFormat.readList(ref, spec.type, tableContext)), column: c, row: i)
                            }
                        }
                    }
                }
            }
            for c in info.columns.indices where !info.indexRoots[c].isNone {
                copy.tables[t].indexRoots[c] = try Self.copyTree(IndexFormat.self, info.indexRoots[c], context, writer) { _ throws(StorageError) in }
            }
        }
        if let blob = try schemaBlob() {
            copy.schemaBlob = try writer.place(BlobNode.encode(blob, version: version))
        }
        let prepared = writer.finish(topRef: try writer.place(copy.encoded()))

        try PosixFile.createAtomically(at: path, suffix: ".compacting", allowExisting: false) { (file) throws(StorageError) in
            try file.setSize(prepared.slot.logicalSize)
            try file.write(FileHeader.initial(), at: 0)
            try prepared.write(to: file, slotIndex: 0, sync: false)
        }
    }

    /// Re-encodes a committed tree through `sink`, leaves first; returns the new root.
    static func copyTree<F: TreeFormat>(_ format: F.Type, _ ref: Ref, _ context: TreeContext, _ sink: NodeSink,
                                        prepare: (F.Leaf) throws(StorageError) -> Void) throws(StorageError) -> Ref {
        let (node, kind) = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
        if kind == F.leafKind {
            let leaf = try F.decodeLeaf(node, context)
            try prepare(leaf)
            return try F.encodeLeaf(leaf, context, sink)
        }
        let inner = try InnerView<F>(node)
        var refs = [Int64]()
        var counts = [Int64]()
        for i in 0..<inner.childCount {
            refs.append(Int64(bitPattern: try copyTree(format, inner.child(i), context, sink, prepare: prepare).offset))
            counts.append(inner.counts[i])
        }
        var w = NodeWriter(capacity: 64 + refs.count * 24)
        PackedInts.write(refs, to: &w)
        PackedInts.write(counts, to: &w)
        F.writeKeys(try F.readKeys(node, at: inner.keysOffset, count: inner.childCount), to: &w)
        return try sink.place(w.finish(kind: F.innerKind, version: sink.version))
    }
}
