#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Compacting copies: one version written into a new file that holds only what that version
// reaches, packed from the header on, with an empty free list and no change history. This is
// what `writeCopy`, `compact` and the upgrade of old formats at open build on.
//
// The version is either committed (a read transaction: every tree a ref into the mapping) or
// the state of an open write transaction (its trees mix committed refs and buffers; nothing
// is committed to copy it). `CopySource` holds either as "a catalogue plus, per table, the
// root of each tree", and the copy walks each tree from its root:
//
//   1. A committed node is read through a context that records no frees and keeps no
//      leaves: a committed leaf is decoded for the copy alone, its lists read in, and encoded
//      anew (reusing the unchanged blocks of the node it came from, whose bytes are copied).
//   2. A buffer of the write transaction is never changed: a cluster leaf is cloned before its
//      lists are read in, an index leaf is encoded as it is, an inner buffer gets the new refs
//      of its children. So copying inside a write leaves the write exactly as it was.
//   3. Children are written before their parent, as at commit; every node carries version 1,
//      the copy's only version.
//
// The nodes stream to the new file as they are made (CopyWriter.swift). It is written and
// synced under a temporary name; only then does it get its name (CopyFile.swift), so a crash
// leaves either no file at the destination or a whole one.

/// What a compacted copy is made of: the catalogue and, per table, the trees as the source
/// holds them.
struct CopySource {
    var top: TopState
    /// The roots of the trees a write transaction has touched; other tables' trees are
    /// committed and named by `top`.
    var clusters: [TableKey: TreeNode<ClusterFormat>] = [:]
    var indexes: [TableKey: [TreeNode<IndexFormat>?]] = [:]
    var schemaBlob: [UInt8]?
    /// Reads the source's committed nodes (see the header, 1).
    let context: TreeContext
    /// Told of the objects copied (CopyProgress.swift).
    var progress: CopyProgressHandler?
    /// How the copy's nodes are sealed: the source's; a plain copy of an encrypted file has
    /// checksums, as every plain file, and an encrypted copy tags under its own keys (`seal`).
    var sealing: NodeSealing
    /// The copy's salt and keys when it is written encrypted (`seal`); nil: in the clear.
    var encryption: CopyEncryption?
    /// An encrypted LZ4 copy's keys (`seal`): its image is plain, its blocks encrypted
    /// (Compressed/CompressedFormat.swift, format 3).
    var compressedEncryption: CompressedCopyKeys?

    init(top: TopState, schemaBlob: [UInt8]?, reading context: TreeContext) {
        self.top = top
        self.schemaBlob = schemaBlob
        sealing = context.check.sealing
        // Without the transaction's freed list: decoding a leaf with removed list columns
        // records their lists as freed, which for the copy must not reach the transaction.
        self.context = TreeContext(base: context.base, limit: context.limit, limits: context.limits, freed: nil, check: context.check,
                                   columns: [], reuse: nil, written: nil, retired: nil)
    }

    /// Writes the copy as version 1 of a new file into `image`, streamed (CopyWriter.swift),
    /// and has it synced. Returns its root, and the counter to finish once the copy has its name.
    func write(to image: CopyImage) throws(StorageError) -> (slot: RootSlot, counter: CopyProgressCounter?) {
        let version = VersionID(1)
        var counter: CopyProgressCounter?
        if let progress {
            var total = 0
            for info in top.tables {
                if let cluster = clusters[info.key] ?? (info.clusterRoot.isNone ? nil : .clean(info.clusterRoot)) {
                    total += try Self.objectCount(cluster, context.with(columns: info.columns))
                }
            }
            counter = CopyProgressCounter(total: total, handler: progress)
        }
        let writer = CopyWriter(version: version, to: image, sealing: sealing, header: encryption?.header ?? FileHeader.initial())
        var copy = top
        copy.version = version
        copy.history = []
        copy.schemaBlob = .none
        for (t, info) in top.tables.enumerated() {
            // Every root is set anew, so that no ref into the source file survives.
            copy.tables[t].clusterRoot = .none
            copy.tables[t].indexRoots = Array(repeating: .none, count: info.indexRoots.count)
            let cluster = clusters[info.key] ?? (info.clusterRoot.isNone ? nil : .clean(info.clusterRoot))
            if let cluster {
                copy.tables[t].clusterRoot = try Self.copy(cluster, context.with(columns: info.columns), writer, depth: 0, counter)
            }
            for c in info.indexRoots.indices {
                // A touched table's index tree where it has one, else the committed root (as a
                // commit keeps it: `Store.prepareCommit`).
                let touched = indexes[info.key].flatMap { c < $0.count ? $0[c] : nil }
                let root = touched ?? (info.indexRoots[c].isNone ? nil : .clean(info.indexRoots[c]))
                if let root { copy.tables[t].indexRoots[c] = try Self.copy(root, context, writer, depth: 0, nil) }
            }
        }
        if let schemaBlob {
            copy.schemaBlob = try writer.place(BlobNode.encode(schemaBlob, version: version))
        }
        return (try writer.finish(topRef: try writer.place(copy.encoded(sealed: writer.storesSeals))), counter)
    }

    /// Writes the tree below `node` into `sink`, leaves first; returns its new root.
    /// `counter`: told of each leaf's objects (object trees only).
    static func copy<F: CopiedFormat>(_ node: TreeNode<F>, _ context: TreeContext, _ sink: NodeSink, depth: Int,
                                      _ counter: CopyProgressCounter?) throws(StorageError) -> Ref {
        // A cycle of refs in a damaged file would recurse until the stack ran out.
        guard depth <= 64 else { throw StorageError(.fileCorrupted, "tree deeper than 64 levels: a cycle of refs") }
        switch node {
        case .leaf(let leaf):
            counter?.advance(by: leaf.count)
            return try F.encodeCopy(of: leaf, owned: false, context, sink)
        case .inner(let inner):
            var refs: [Ref] = []
            refs.reserveCapacity(inner.children.count)
            for child in inner.children {
                refs.append(try copy(child, context, sink, depth: depth + 1, counter))
            }
            return try sink.place(BTree<F>.encodeInner(inner, refs: refs, version: sink.version, sealed: sink.storesSeals))
        case .clean(let ref):
            let (node, kind) = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
            if kind == F.leafKind {
                // Only bytes the checksum has vouched for: a file of a format before node
                // checksums is decoded, so that its damage is found here rather than
                // stamped with a valid checksum in the copy (the upgrade at open is a copy).
                if let counter { counter.advance(by: Int(try node.u32(NodeLayout.headerSize))) }
                if context.check.enabled && F.copiesLeafBytes(context) { return try sink.place(rebadged(node, version: sink.version)) }
                return try F.encodeCopy(of: try F.decodeLeaf(node, context), owned: true, context, sink)
            }
            let inner = try InnerView<F>(node)
            var refs: [Ref] = []
            var counts: [Int64] = []
            for i in 0..<inner.childCount {
                refs.append(try copy(TreeNode<F>.clean(inner.child(i)), context, sink, depth: depth + 1, counter))
                counts.append(inner.counts[i])
            }
            var w = NodeWriter(capacity: 64 + refs.count * 32)
            PackedInts.write(refs.map { Int64(bitPattern: $0.offset) }, to: &w)
            PackedInts.write(counts, to: &w)
            if sink.storesSeals { InnerView<F>.writeSeals(refs, to: &w) }
            F.writeKeys(try F.readKeys(node, at: inner.keysOffset, count: inner.childCount), to: &w)
            return try sink.place(w.finish(kind: F.innerKind, version: sink.version, flags: sink.storesSeals ? SealedRefs.flag : 0))
        }
    }
}

extension CopySource {
    /// A committed node's bytes as the copy's own: its header names the copy's version (the
    /// checksum, which covers the node's new offset, is stamped as the copy is gathered).
    static func rebadged(_ node: NodeView, version: VersionID) -> [UInt8] {
        var bytes = [UInt8](UnsafeRawBufferPointer(start: node.base, count: node.length))
        let kind = node.base.load(as: UInt8.self), flags = node.base.load(fromByteOffset: 1, as: UInt8.self)
        bytes.withUnsafeMutableBytes { header in
            NodeLayout.storeHeader(header.baseAddress!, kind: NodeKind(rawValue: kind)!, flags: flags, length: node.length, version: version.value)
        }
        return bytes
    }
}

/// How a compacted copy encodes the leaves of one kind of tree.
protocol CopiedFormat: TreeFormat {
    /// Whether a committed leaf refers to no other node, so that the copy takes its bytes
    /// as they are (with its own version) instead of decoding and encoding its values: that
    /// decoding was four fifths of a copy's time.
    static func copiesLeafBytes(_ context: TreeContext) -> Bool

    /// Encodes `leaf` into the copy so that it refers to nothing in the source file.
    /// `owned`: decoded for the copy alone, so it may be changed; otherwise a write
    /// transaction's buffer, which must stay as it is (see the header, 2).
    static func encodeCopy(of leaf: Leaf, owned: Bool, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref
}

extension ClusterFormat: CopiedFormat {
    /// A table with lists keeps them in nodes of their own, named by refs in the leaf; a
    /// removed column's values are dropped by decoding (as a commit drops them).
    static func copiesLeafBytes(_ context: TreeContext) -> Bool {
        !context.columns.contains { $0.isList || $0.removed }
    }

    static func encodeCopy(of leaf: ClusterLeaf, owned: Bool, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref {
        // A clone has no source node, so it is encoded in full from its values.
        let copy = owned ? leaf : ClusterLeaf(keys: leaf.keys, columns: leaf.columns, lists: leaf.lists, byteEstimate: leaf.byteEstimate)
        // Lists are nodes of their own in the source file: read them in, to be written with the leaf.
        for (c, spec) in context.columns.enumerated() where spec.isList && !spec.removed {
            for i in copy.lists[c].indices {
                if case .clean(let ref) = copy.lists[c][i], !ref.isNone {
                    copy.setList(.dirty(try readList(ref, spec.type, context)), column: c, row: i)
                }
            }
        }
        return try encodeLeaf(copy, context, sink)
    }
}

extension IndexFormat: CopiedFormat {
    static func copiesLeafBytes(_ context: TreeContext) -> Bool { true }

    static func encodeCopy(of leaf: IndexLeaf, owned: Bool, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref {
        // Index entries hold their values inline: encoding reads the leaf and changes nothing.
        try sink.place(encodeNode(leaf, context, version: sink.version, reusingSource: owned).bytes)
    }
}

extension Store {
    /// Writes the newest version, compacted, to a new file at `path`; encrypted with
    /// `encryptionKey` when one is given (`ReadTransaction.writeCompactedCopy`).
    ///
    /// - Throws: `fileExists` when `path` exists, I/O errors.
    package func writeCompactedCopy(to path: String, compression: CopyCompression = .none, encryptionKey: [UInt8]? = nil,
                                    progress: CopyProgressHandler? = nil) throws(StorageError) {
        try beginRead().writeCompactedCopy(to: path, compression: compression, encryptionKey: encryptionKey, progress: progress)
    }
}

extension ReadTransaction {
    /// Writes this version, compacted, to a new file at `path`, synced with its folder;
    /// `compression` .lz4 writes an LZ4-compressed copy (Compressed/CompressedFormat.swift).
    /// With `encryptionKey` (64 bytes) the copy is an encrypted file (format 6) with a salt of
    /// its own, whatever the source is; without one it is written in the clear, also when the
    /// source is encrypted (`CopySource.seal`).
    ///
    /// With `.lz4` and a key, the image is plain and its blocks are compressed, then encrypted
    /// (an encrypted compressed copy, format 3).
    ///
    /// - Throws: `invalidArgument` for a key that is not 64 bytes, before anything is written;
    ///   `fileExists` when `path` exists,
    ///   `outOfDiskSpace`, `ioFailure`, `fileCorrupted` for a damaged source.
    package func writeCompactedCopy(to path: String, compression: CopyCompression = .none, encryptionKey: [UInt8]? = nil,
                                    progress: CopyProgressHandler? = nil) throws(StorageError) {
        try CopySource.check(encryptionKey)
        try CopyFile.refuseExisting(path)
        var source = CopySource(top: top, schemaBlob: try schemaBlob(), reading: context)
        source.progress = progress
        try source.seal(for: store, encryptionKey: encryptionKey, compression: compression)
        let counter = try CopyFile.create(at: path, source, compression: compression, hooks: store.options.copyHooks)
        counter?.finish()
    }
}

/// An encrypted copy's salt, new for the copy, and the keys it gives with the user's key
/// (File/EncryptionHeader.swift): every copy, compaction or change of key gets a salt of its own.
struct CopyEncryption {
    let salt: [UInt8]
    let keys: EncryptionKeys

    /// A new random salt and the keys of `key` (64 bytes, checked before) with it.
    init(key: [UInt8]) throws(StorageError) {
        salt = try SecureRandom.bytes(EncryptionKeys.saltLength)
        keys = EncryptionKeys(userKey: key, salt: salt)
    }

    /// The copy's header page before its root slot is set: format 6, the salt and the key check.
    var header: [UInt8] { EncryptionHeader.initial(salt: salt, keys: keys) }
}

extension CopySource {
    /// Refuses, before anything is read or written, a copy's key that is not 64 bytes
    /// (`invalidArgument`).
    static func check(_ encryptionKey: [UInt8]?) throws(StorageError) {
        guard let encryptionKey else { return }
        try EncryptionHeader.validate(encryptionKey)
    }

    /// How the copy is sealed and whether it is encrypted. With `encryptionKey` (checked by
    /// `check`): encrypted under a new salt, its nodes tagged with the copy's own node key;
    /// with `.lz4` too, its image is plain, with checksums, and its blocks are compressed, then
    /// encrypted and tagged under the copy's own keys (Compressed/CompressedFormat.swift,
    /// format 3). Without: in the clear, and a copy of an encrypted file gets checksums, as
    /// every plain file has; a plain source keeps its sealing (tags on a plain file are a test
    /// option).
    mutating func seal(for store: Store, encryptionKey: [UInt8]?, compression: CopyCompression = .none) throws(StorageError) {
        encryption = nil
        compressedEncryption = nil
        if let encryptionKey, compression == .lz4 {
            compressedEncryption = try CompressedCopyKeys(newCopyWith: encryptionKey)
            sealing = .checksum
        } else if let encryptionKey {
            let encryption = try CopyEncryption(key: encryptionKey)
            self.encryption = encryption
            sealing = .authenticated(encryption.keys.nodes)
        } else if store.file is EncryptedFile {
            sealing = .checksum
        }
    }
}

extension WriteTransaction {
    /// Writes the state of this open transaction, its uncommitted changes included, compacted
    /// to a new file at `path`, synced with its folder. The transaction goes on as it was.
    ///
    /// - Throws: `transactionEnded` after the commit or rollback, and what
    ///   `ReadTransaction.writeCompactedCopy` throws.
    package func writeCompactedCopy(to path: String, compression: CopyCompression = .none, encryptionKey: [UInt8]? = nil,
                                    progress: CopyProgressHandler? = nil) throws(StorageError) {
        try ensureActive()
        try CopySource.check(encryptionKey)
        try CopyFile.refuseExisting(path)
        // What a commit would do first, and what reads do when they need it: the copy then
        // holds no link to an object deleted here, and every index has its pending entries.
        try clearLinksToDeletedObjects()
        for state in states.values { try flushIndexEntries(state) }
        var source = CopySource(top: top, schemaBlob: try schemaBlob(), reading: context)
        for (key, state) in states {
            source.clusters[key] = state.cluster.root
            source.indexes[key] = state.indexes.map { $0?.root }
        }
        source.progress = progress
        try source.seal(for: store, encryptionKey: encryptionKey, compression: compression)
        let counter = try CopyFile.create(at: path, source, compression: compression, hooks: store.options.copyHooks)
        counter?.finish()
    }
}
