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

    func open(path: String, options: StoreOptions) throws(StorageError) -> Store {
        if let key = options.encryptionKey { try EncryptionHeader.validate(key) }
        let key = options.durability == .memOnly ? "memory:" + path : StoreRegistry.canonical(path)
        return try stores.withLock { (stores) throws(StorageError) -> Store in
            if let existing = stores[key]?.store {
                // A file has one key (or none), and the open store's passed the file's check:
                // another is wrong, and must not be let in by the shared store (E8).
                guard options.durability == .memOnly || existing.options.encryptionKey == options.encryptionKey else {
                    throw StorageError(.decryptionFailed, options.encryptionKey == nil
                                       ? "the file is encrypted (it is open in this process with its key): open it with the 64-byte encryptionKey it was written with"
                                       : "the encryption key does not match the file: it is open in this process with "
                                       + (existing.options.encryptionKey == nil ? "no key, being a plain file" : "another key, the one it was written with"),
                                       path: path)
                }
                return existing
            }
            let store = try Store(path: path, options: options)
            stores[key] = WeakStore(store)
            stores = stores.filter { $0.value.store != nil }
            return store
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
