// The integrity check: walk everything one version reaches and prove the file consistent.
//
// Checked, for the version and the file:
//   1. Every node lies inside the version's space, has a known kind and a sane length, and
//      every field inside it is within its length (NodeView does this on every read).
//   2. Trees: keys strictly ascending within and across leaves; separator i of an inner node
//      equals the first key of child i's subtree; recorded counts equal subtree sizes; no
//      inner node is empty; depth is bounded.
//   3. Clusters: every column block parses with one value per object; string offsets are in
//      order; lists parse with their element type; links point at existing objects.
//   4. Indexes: entries ascending; exactly one entry per object, equal to the object's value.
//   5. Space: reachable nodes never overlap each other or the free list, and together with the
//      free list they cover the file exactly from the header to the version's logical size
//      (nothing leaked, nothing free twice).

package struct VerifyReport: Sendable, Equatable {
    package var version: VersionID
    package var tables: Int = 0
    package var objects: Int = 0
    package var nodes: Int = 0
    package var reachableBytes: UInt64 = 0
    package var freeBytes: UInt64 = 0
    /// Entries of the free list: what a commit's allocator works through.
    package var freeExtents: Int = 0
    package var logicalSize: UInt64 = 0
}

extension Store {
    /// Checks the newest committed version and the free space of the file.
    ///
    /// - Throws: `fileCorrupted` naming the first inconsistency found.
    /// `uncached`: every node's checksum is computed again, also for nodes this process has
    /// verified or written before (VerifiedNodes.swift): what the file holds, not what it held.
    /// `progress` is told the objects checked, as a copy tells its own (CopyProgress.swift).
    @discardableResult
    package func verify(uncached: Bool = false, progress: CopyProgressHandler? = nil) throws(StorageError) -> VerifyReport {
        let read = beginRead()
        do throws(StorageError) {
            return try read.verify(uncached: uncached, progress: progress)
        } catch {
            throw StorageError(.fileCorrupted, "verify: \(error.message)", path: path)
        }
    }
}

extension Store {
    /// Reads every node of the version `read` pins through its checksum (`walkNodes`; in a
    /// file of a format before node checksums, the full check `verify` instead), unless
    /// this process knows the version whole already: walked before, or committed here on top
    /// of a version known whole. After it no read of the version can meet damage. What
    /// `Realm.Configuration.verifyIntegrityOnOpen` runs.
    ///
    /// - Throws: `fileCorrupted` naming the damage and the file.
    package func verifyIntegrity(of read: ReadTransaction) throws(StorageError) {
        let slot = read.slot
        let known = stateLock.withLock { state in
            state.wholeVersions.contains { $0.version == slot.version.value && $0.record == slot.commitRecordChecksum }
        }
        if known { return }
        do throws(StorageError) {
            // A file of a format before node checksums has none to read: the full check.
            if verifiesNodes { _ = try read.walkNodes() } else { _ = try read.verify() }
        } catch {
            throw StorageError(.fileCorrupted, "verifying the file at open: \(error.message)", path: path)
        }
        stateLock.withLock { $0.noteWhole(slot) }
    }
}

extension Store.State {
    /// Records `slot` as known whole.
    mutating func noteWhole(_ slot: RootSlot) {
        wholeVersions.append((slot.version.value, slot.commitRecordChecksum))
        if wholeVersions.count > 16 { wholeVersions.removeFirst(wholeVersions.count - 16) }
    }

    /// For this process's commit of `slot` on top of `base`: whole when `base` is.
    mutating func noteCommitted(_ slot: RootSlot, base: RootSlot) {
        if wholeVersions.contains(where: { $0.version == base.version.value && $0.record == base.commitRecordChecksum }) { noteWhole(slot) }
    }
}

extension ReadTransaction {
    /// Checks this version: everything it reaches and its free list. `progress` is told the
    /// objects checked, leaf by leaf (the objects are most of a file's work; the free list and
    /// the indexes count for nothing).
    package func verify(uncached: Bool = false, progress: CopyProgressHandler? = nil) throws(StorageError) -> VerifyReport {
        let walked = uncached
            ? TreeContext(base: context.base, limit: context.limit, limits: context.limits, freed: nil, check: context.check.uncached)
            : context
        var walker = Verifier(context: walked, limit: slot.logicalSize)
        if let progress {
            var total = 0
            for info in top.tables { total += try table(info.key).count() }
            walker.progress = CopyProgressCounter(total: total, handler: progress)
        }
        var report = VerifyReport(version: version, logicalSize: slot.logicalSize)
        try walker.claim(slot.topRef, .top)
        try walker.claim(slot.commitRecordRef, .commitRecord)
        if !slot.runHeader.isNone { try walker.claim(slot.runHeader, .runHeader) }
        let free = try FreeSpace.decode(head: slot.freeListRef, mapping: walked.base, logicalSize: slot.logicalSize, check: walked.check)
        for node in free.chain { try walker.claim(node.ref, node.kind) }
        if !top.schemaBlob.isNone { _ = try BlobNode.decode(try walker.claim(top.schemaBlob, .blob)) }
        for entry in top.history where !entry.ref.isNone {
            _ = try ChangeSet.decode(try walker.claim(entry.ref, .changeSet))
        }
        for info in top.tables {
            let objects = try walker.checkTable(info, top: top)
            report.objects += objects
            report.tables += 1
        }
        report.nodes = walker.extents.count
        report.reachableBytes = walker.extents.reduce(0) { $0 + $1.length }
        report.freeBytes = free.freeBytes
        report.freeExtents = free.extents.count
        try walker.checkCoverage(free: free)
        walker.progress?.finish()
        return report
    }
}

struct Verifier {
    let context: TreeContext
    let limit: UInt64
    var extents: [(offset: UInt64, length: UInt64)] = []
    /// Counts the objects checked, for `verify`'s `progress`.
    var progress: CopyProgressCounter?

    init(context: TreeContext, limit: UInt64) {
        self.context = context
        self.limit = limit
    }

    @discardableResult
    mutating func claim(_ ref: Ref, _ kind: NodeKind) throws(StorageError) -> NodeView {
        let node = try context.node(ref, kind)
        extents.append((ref.offset, UInt64(context.check.sealing.footprint(node.length))))
        return node
    }

    mutating func claim(_ node: NodeView) {
        extents.append((node.ref.offset, UInt64(context.check.sealing.footprint(node.length))))
    }

    func checkCoverage(free: FreeSpace) throws(StorageError) {
        var all = extents.map { (offset: $0.offset, length: $0.length, free: false) }
        all += free.extents.map { (offset: $0.offset, length: $0.length, free: true) }
        all.sort { $0.offset < $1.offset }
        var position = UInt64(FileHeader.size)
        for extent in all {
            if extent.offset < position {
                throw StorageError(.fileCorrupted, "\(extent.free ? "free" : "reachable") space at \(extent.offset) overlaps space before \(position)")
            }
            if extent.offset > position {
                throw StorageError(.fileCorrupted, "\(extent.offset - position) bytes at \(position) are neither reachable nor free (leaked)")
            }
            position = extent.offset + extent.length
        }
        if position != free.logicalSize {
            throw StorageError(.fileCorrupted, "space ends at \(position) but the version's size is \(free.logicalSize)")
        }
    }

    // MARK: Tables

    /// Checks one table's cluster tree and indexes; returns its object count.
    mutating func checkTable(_ info: TableInfo, top: TopState) throws(StorageError) -> Int {
        let tableContext = context.with(columns: info.columns)
        var keys = [Int64]()
        var indexed: [Int: [IndexEntry]] = [:]
        var lists: [NodeView] = []
        let verifier = self
        if !info.clusterRoot.isNone {
            var previous: Int64? = nil
            _ = try checkTree(ClusterFormat.self, info.clusterRoot, tableContext, depth: 0) { (node) throws(StorageError) -> (Int, Int64?) in
                let leaf = try ClusterLeafView(node)
                if leaf.hasConsecutiveKeys, leaf.count > 0, leaf.keys[leaf.count - 1] &- leaf.keys[0] != Int64(leaf.count - 1) {
                    throw StorageError(.fileCorrupted, "table \(info.name): leaf \(node.ref) claims consecutive keys but has gaps")
                }
                for i in 0..<leaf.count {
                    let key = leaf.keys[i]
                    if let p = previous, p >= key {
                        throw StorageError(.fileCorrupted, "table \(info.name): object keys out of order at \(key)")
                    }
                    previous = key
                    keys.append(key)
                }
                for (c, spec) in info.columns.enumerated() where !spec.removed {
                    if spec.isList {
                        guard let refs = try leaf.listRefs(c) else { continue }
                        for i in 0..<refs.count where !refs.ref(i).isNone {
                            let list = try tableContext.node(refs.ref(i), .list)
                            lists.append(list)
                            let elements = try ColumnView(node: list, offset: 24, expecting: spec.type).values()
                            for element in elements { try verifier.checkLink(element, spec, top) }
                        }
                    } else if let column = try leaf.column(c, spec.type) {
                        for i in 0..<leaf.count {
                            let value = try column.value(i)
                            try verifier.checkLink(value, spec, top)
                            if spec.isObjectKey, value != .int(leaf.keys[i]) {
                                throw StorageError(.fileCorrupted, "table \(info.name): object \(leaf.keys[i]) holds \(value) in its key column \(spec.name)")
                            }
                            if spec.indexed { indexed[c, default: []].append(IndexEntry(prefix: IndexKey.prefix(value).bytes, key: leaf.keys[i])) }
                        }
                    } else if spec.indexed {
                        let value = Value.defaultValue(for: spec.type, nullable: spec.nullable)
                        for i in 0..<leaf.count { indexed[c, default: []].append(IndexEntry(prefix: IndexKey.prefix(value).bytes, key: leaf.keys[i])) }
                    }
                }
                verifier.progress?.advance(by: leaf.count)
                return (leaf.count, leaf.count > 0 ? leaf.keys[0] : nil)
            }
        }
        for list in lists { claim(list) }
        for (c, spec) in info.columns.enumerated() where spec.indexed && !spec.removed {
            var entries = [IndexEntry]()
            let root = info.indexRoots[c]
            if !root.isNone {
                _ = try checkTree(IndexFormat.self, root, context, depth: 0) { (node) throws(StorageError) -> (Int, IndexEntry?) in
                    let block = try IndexLeafView(node).entries
                    for i in 0..<block.count { entries.append(try block.entry(i)) }
                    return (block.count, block.count > 0 ? try block.entry(0) : nil)
                }
            }
            for i in entries.indices.dropFirst() where !(entries[i - 1] < entries[i]) {
                throw StorageError(.fileCorrupted, "index \(info.name).\(spec.name): entries out of order")
            }
            let expected = (indexed[c] ?? []).sorted()
            guard entries == expected else {
                throw StorageError(.fileCorrupted, "index \(info.name).\(spec.name) holds \(entries.count) entries that do not match the \(expected.count) objects")
            }
        }
        return keys.count
    }

    func checkLink(_ value: Value, _ spec: ColumnSpec, _ top: TopState) throws(StorageError) {
        let target: ObjectKey, targetInfo: TableInfo
        switch value {
        case .link(let key):
            guard let targetKey = spec.linkTarget, let info = top.table(targetKey) else {
                throw StorageError(.fileCorrupted, "link column \(spec.name) names no existing table")
            }
            (target, targetInfo) = (key, info)
        case .typedLink(let table, let key):
            guard let info = top.table(table) else {
                throw StorageError(.fileCorrupted, "mixed column \(spec.name) links to table \(table), which does not exist")
            }
            (target, targetInfo) = (key, info)
        default:
            return
        }
        let tree = BTree<ClusterFormat>(root: targetInfo.clusterRoot, context: context.with(columns: targetInfo.columns))
        guard case .clean(let node) = try tree.leaf(for: target.value), try ClusterLeafView(node).row(of: target.value) != nil else {
            throw StorageError(.fileCorrupted, "link \(spec.name) points at missing object \(target) of \(targetInfo.name)")
        }
    }

    /// Walks a committed tree, claiming its nodes; `leaf` checks one leaf and returns its
    /// entry count and first key. Returns the subtree's count and first key.
    mutating func checkTree<F: TreeFormat>(_ format: F.Type, _ ref: Ref, _ context: TreeContext, depth: Int,
                                           _ leaf: (NodeView) throws(StorageError) -> (Int, F.Key?)) throws(StorageError) -> (Int, F.Key?) {
        guard depth <= 64 else { throw StorageError(.fileCorrupted, "tree deeper than 64 levels") }
        let (node, kind) = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
        claim(node)
        if kind == F.leafKind { return try leaf(node) }
        let inner = try InnerView<F>(node)
        let keys = try F.readKeys(node, at: inner.keysOffset, count: inner.childCount)
        var total = 0
        for i in 0..<inner.childCount {
            let (count, first) = try checkTree(format, inner.child(i), context, depth: depth + 1, leaf)
            guard count > 0, Int(inner.counts[i]) == count else {
                throw StorageError(.fileCorrupted, "inner node \(ref): child \(i) holds \(count) entries, recorded \(inner.counts[i])")
            }
            guard first == keys[i] else {
                throw StorageError(.fileCorrupted, "inner node \(ref): separator \(i) differs from its child's first key")
            }
            total += count
        }
        return (total, keys.first)
    }
}
