#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The stores open in this process, by path, so that every opener of a file shares one.
final class StoreRegistry: Sendable {
    static let shared = StoreRegistry()
    private final class WeakStore { weak var store: Store? ; init(_ s: Store) { store = s } }
    private let stores = Locked([String: WeakStore]())

    /// The store already open for the file (or in-memory identifier) when there is one, else a
    /// new one. An encryption key must be the one the open store was opened with: the header
    /// was checked against that key only, and sharing the store would let any key (or none)
    /// read an encrypted file another realm of this process has open.
    func open(path: String, options: StoreOptions) throws(StorageError) -> Store {
        if let key = options.encryptionKey { try EncryptionHeader.validate(key) }
        let key = options.durability == .memOnly ? "memory:" + path : StoreRegistry.canonical(path)
        return try stores.withLock { (stores) throws(StorageError) -> Store in
            if let existing = stores[key]?.store {
                try Self.checkKey(options.encryptionKey, fits: existing, path: path)
                return existing
            }
            let store = try Store(path: path, options: options)
            stores[key] = WeakStore(store)
            stores = stores.filter { $0.value.store != nil }
            return store
        }
    }

    /// Throws `decryptionFailed` unless `key` is the key `store` was opened with (both nil
    /// included), with the message opening the file itself would give.
    private static func checkKey(_ key: [UInt8]?, fits store: Store, path: String) throws(StorageError) {
        let opened = store.options.encryptionKey
        switch (opened, key) {
        case (nil, nil):
            return
        case (let opened?, let key?) where EncryptionHeader.constantTimeEqual(opened, key):
            return
        case (nil, _?):
            throw StorageError(.decryptionFailed, store.options.durability == .memOnly
                               ? "this in-memory realm is open without an encryption key, and one was given: open it as it was first opened"
                               : "the file is not encrypted, and an encryption key was given: open it without a key, or write an encrypted copy with writeCopy(toFile:encryptionKey:)",
                               path: path)
        case (_?, nil):
            throw StorageError(.decryptionFailed, store.options.durability == .memOnly
                               ? "this in-memory realm is open with an encryption key, and none was given: open it with the same key"
                               : "the file is encrypted: open it with the 64-byte encryptionKey it was written with", path: path)
        case (_?, _?):
            throw StorageError(.decryptionFailed, "the encryption key is not the one this realm is open with in this process: "
                               + "open it with the key it was written with", path: path)
        }
    }

    /// Whether a store for the file at `path` is open in this process.
    func isOpen(path: String) -> Bool {
        let key = StoreRegistry.canonical(path)
        return stores.withLock { $0[key]?.store != nil }
    }

    /// The path with its folder resolved (symlinks, `..`), so that two spellings of one file
    /// share a store whether or not the file exists yet.
    private static func canonical(_ path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolved = realpath(folder.isEmpty ? "/" : folder, nil) else { return path }
        defer { free(resolved) }
        let base = String(cString: resolved)
        return (base == "/" ? "" : base) + "/" + name
    }
}
