import Foundation
import RealmStorage

extension Realm {
    /// Whether the file a configuration names exists (always false for in-memory realms).
    public static func fileExists(for configuration: Configuration) -> Bool {
        guard configuration.inMemoryIdentifier == nil else { return false }
        return FileManager.default.fileExists(atPath: configuration.path)
    }

    /// Deletes the realm file of a configuration and its auxiliary files (the lock file, and
    /// the copy a compaction stopped by a crash left). Returns whether a realm file existed.
    ///
    /// - Throws: `Realm.Error` `alreadyOpen` while a `Realm` in this process or another has
    ///   the file open; `filePermissionDenied` or `fileAccess` when a file cannot be removed.
    @discardableResult
    public static func deleteFiles(for configuration: Configuration) throws -> Bool {
        guard configuration.inMemoryIdentifier == nil else { return false }
        let path = configuration.path
        if Store.isOpen(path: path) {
            throw Realm.Error(.alreadyOpen, "the realm is open in this process: close every Realm for it before deleting its files", path: path)
        }
        if Store.isOpenByAnyProcess(path: path) {
            throw Realm.Error(.alreadyOpen, "the realm is open in another process: close it there before deleting its files", path: path)
        }
        let existed = FileManager.default.fileExists(atPath: path)
        for file in [path, path + ".lock", path + ".compacting"] where FileManager.default.fileExists(atPath: file) {
            guard unlink(file) == 0 else {
                let code: Realm.Error.Code = errno == EACCES || errno == EPERM ? .filePermissionDenied : .fileAccess
                throw Realm.Error(code, "cannot delete \(file): \(String(cString: strerror(errno)))", path: path, errno: errno)
            }
        }
        return existed
    }
}
