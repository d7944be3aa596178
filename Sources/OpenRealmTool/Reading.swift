import RealmStorage

/// A realm file a command reads, opened read-only, never created, with `key` for an encrypted
/// file, and without creating a lock file beside it (`StoreOptions.createsLockFile`): a command
/// that only looks at a file leaves the folder as it found it. A writer in another process
/// cannot open the file while the command reads it when there was no lock file; one that has
/// it open already is joined as any reader joins it (ProcessCoordination.swift).
struct Reading {
    let path: String
    let key: [UInt8]?
    let store: Store

    init(path: String, key: [UInt8]?) throws(StorageError) {
        self.path = path
        self.key = key
        store = try Store.open(path: path, options: Self.options(key: key))
    }

    static func options(key: [UInt8]?) -> StoreOptions {
        var options = StoreOptions(create: false, readOnly: true)
        options.createsLockFile = false
        options.encryptionKey = key
        return options
    }

    /// Whether the file is an LZ4-compressed copy (read in place, read-only).
    var isCompressed: Bool { store.compressedCounts != nil }
}
