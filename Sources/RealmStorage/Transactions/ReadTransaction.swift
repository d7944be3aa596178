/// A pinned, immutable version of the file. Reads go straight to the mapping, without locks.
///
/// The version stays pinned (its space is not reused) until the transaction is released;
/// `Sendable` because nothing in it changes after creation, so many tasks can read one
/// snapshot at once.
package final class ReadTransaction: @unchecked Sendable {
    // @unchecked: every stored property is immutable, and the mapping bytes reachable from
    // this version are never rewritten while it is pinned (FreeSpace.swift).
    package let store: Store
    package let slot: RootSlot
    package let top: TopState
    let mapping: Mapping
    let context: TreeContext

    init(store: Store, slot: RootSlot, top: TopState, mapping: Mapping) {
        self.store = store
        self.slot = slot
        self.top = top
        self.mapping = mapping
        self.context = TreeContext(base: mapping.base, limit: slot.logicalSize, limits: store.options.limits, freed: nil,
                                   check: store.nodeCheck(mapping))
    }

    deinit { store.registry.unpin(slot.version) }

    package var version: VersionID { slot.version }
    package var tables: [TableInfo] { top.tables }

    package func table(_ key: TableKey) throws(StorageError) -> TableView {
        guard let info = top.table(key) else { throw StorageError(.invalidArgument, "no table \(key)") }
        return TableView(info: info, context: context)
    }

    package func table(named name: String) throws(StorageError) -> TableView? {
        guard let info = top.table(named: name) else { return nil }
        // Reads never decode leaves, so the shared context (without columns) serves every table.
        return TableView(info: info, context: context)
    }

    /// The schema blob stored by the layer above, if any.
    package func schemaBlob() throws(StorageError) -> [UInt8]? {
        guard !top.schemaBlob.isNone else { return nil }
        return try BlobNode.decode(try context.node(top.schemaBlob, .blob))
    }

    /// What changed from `since` (an older version, still pinned by its reader) to this one.
    ///
    /// - Throws: `invalidArgument` when `since` is newer than this version or its history is no
    ///   longer kept (it was not pinned).
    package func changes(since: VersionID) throws(StorageError) -> ChangeSet {
        try Self.changes(in: top, since: since, context: context)
    }

    static func changes(in top: TopState, since: VersionID, context: TreeContext) throws(StorageError) -> ChangeSet {
        guard since <= top.version else {
            throw StorageError(.invalidArgument, "\(since) is newer than \(top.version)")
        }
        var result = ChangeSet()
        guard since < top.version else { return result }
        guard let first = top.history.firstIndex(where: { $0.from == since }) else {
            throw StorageError(.invalidArgument, "the changes since \(since) are no longer kept: only versions pinned by a reader keep their history")
        }
        for entry in top.history[first...] where !entry.ref.isNone {
            result.append(try ChangeSet.decode(try context.node(entry.ref, .changeSet)))
        }
        return result
    }
}
