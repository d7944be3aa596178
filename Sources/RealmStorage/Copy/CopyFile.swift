#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Putting a copy on disk. Two ways, one order of steps:
//
//   new file (writeCopy)            replacement (compact)
//   1. write <tmp>, sync it         1. write <path>.compacting, sync it
//   2. link <tmp> at <path>         2. rename it over <path>
//      (fails if <path> exists)
//   3. unlink <tmp>, sync folder    3. sync the folder
//
// Invariants, for a crash at any instant:
//   1. The destination name only ever names a complete, synced file: step 2 comes after the
//      sync of step 1, and link and rename are atomic.
//   2. Until the folder is synced, the name change may be lost: a new copy may be missing,
//      a replaced file may be the old one. Both are whole (the old file is never written).
//   3. A failed step undoes what it can (the temporary file goes) and throws: a copy that
//      returns has reached the disk, folder included.
//   4. A crash leaves a new copy's temporary file (`<path>.<random>.copying`) behind; the next
//      copy to the same path removes such files, but only those nobody is writing: a copy
//      holds an exclusive `flock` on its temporary file while it writes, and a file changed in
//      the last minute is left alone too (`removeStaleTemporaries`).
//
// `CopyHooks` lets tests wrap the new file (fault and crash injection) and stop before each
// change of the folder, as a crash there would.

/// Test seams of copying and compacting (see the header).
package struct CopyHooks: Sendable {
    /// Wraps the file the copy is written to.
    package var fileWrapper: (@Sendable (StorageFile) -> StorageFile)?
    /// Called before each change to the folder; a throw stops the copy there.
    package var beforeFolderStep: (@Sendable (FolderStep) throws(StorageError) -> Void)?

    package init(fileWrapper: (@Sendable (StorageFile) -> StorageFile)? = nil,
                 beforeFolderStep: (@Sendable (FolderStep) throws(StorageError) -> Void)? = nil) {
        self.fileWrapper = fileWrapper
        self.beforeFolderStep = beforeFolderStep
    }
}

/// How a copy stores its nodes.
package enum CopyCompression: Sendable, Equatable {
    /// A realm file, as the source's.
    case none
    /// An LZ4-compressed copy, opened read-only in place (Compressed/CompressedFormat.swift).
    case lz4
}

/// A change to the folder a copy is made in.
package enum FolderStep: Sendable, Equatable {
    /// A new copy gets its name.
    case link
    /// A compacted file replaces the original.
    case rename
    case syncFolder
}

enum CopyFile {
    /// Refuses a destination that exists, before any work is done. (Step 2 refuses it again,
    /// atomically, if one appears meanwhile.)
    static func refuseExisting(_ path: String) throws(StorageError) {
        guard access(path, F_OK) != 0 else {
            throw StorageError(.fileExists, "a file already exists at the destination of the copy; choose a new path or delete it first",
                               path: path)
        }
    }

    /// Writes the copy of `source` to a new file at `path` (which must not exist), synced with
    /// its folder (see the header). Returns the copy's progress counter, to be finished.
    static func create(at path: String, _ source: CopySource, compression: CopyCompression = .none,
                       hooks: CopyHooks) throws(StorageError) -> CopyProgressCounter? {
        removeStaleTemporaries(of: path)
        // A name of its own: copies to one destination at once must not share a temporary file.
        let temporary = path + ".\(String(UInt64.random(in: .min ... .max), radix: 16))" + temporarySuffix
        let counter = try write(source, to: temporary, compression: compression, hooks: hooks).counter
        do throws(StorageError) {
            try hooks.beforeFolderStep?(.link)
        } catch {
            unlink(temporary)
            throw error
        }
        if let err = PosixFile.linkInPlace(temporary, at: path) {
            if err == EEXIST {
                throw StorageError(.fileExists, "a file appeared at the destination of the copy while it was written; choose a new path",
                                   path: path, errno: err)
            }
            throw StorageError.system("naming the copy", path: path, errno: err)
        }
        do throws(StorageError) {
            try syncFolder(of: path, hooks: hooks)
        } catch {
            // Not known to be durable: no copy is better than one that may vanish later.
            unlink(path)
            throw error
        }
        return counter
    }

    /// Writes the copy of `source` into a new file at `path` and syncs it (step 1), through an
    /// `EncryptedFile` when the source says the copy is encrypted. On failure the file is removed.
    @discardableResult
    static func write(_ source: CopySource, to path: String, compression: CopyCompression = .none,
                      hooks: CopyHooks) throws(StorageError) -> (slot: RootSlot, counter: CopyProgressCounter?) {
        var written: (slot: RootSlot, counter: CopyProgressCounter?)?
        try write(to: path, hooks: hooks) { (file) throws(StorageError) in
            let image: CopyImage
            if let encryption = source.encryption {
                // Encrypted as it is written; a test's layer stays under the cipher, so that its
                // tears and losses hit the ciphertext. (LZ4 with a key is `compressedEncryption`.)
                precondition(compression == .none, "an encrypted realm file is not compressed: its blocks are")
                image = PlainCopyImage(EncryptedFile(inner: file, cipher: encryption.keys.pages, path: path))
            } else {
                image = compression == .lz4 ? CompressedCopyImage(file, keys: source.compressedEncryption) : PlainCopyImage(file)
            }
            written = try source.write(to: image)
        }
        return written!
    }

    /// Creates a new file at `path` and has `body` write and sync it. On failure the file is
    /// removed.
    static func write(to path: String, hooks: CopyHooks, _ body: (StorageFile) throws(StorageError) -> Void) throws(StorageError) {
        do throws(StorageError) {
            let posix = try PosixFile(path: path, mode: .createNew)
            // Held while it is written: it is not stale (invariant 4).
            let holder = open(path, O_RDONLY | O_CLOEXEC)
            if holder >= 0 { _ = flock(holder, LOCK_EX | LOCK_NB) }
            defer { if holder >= 0 { close(holder) } }
            try body(hooks.fileWrapper?(posix) ?? posix)
        } catch {
            unlink(path)
            throw error
        }
    }

    static let temporarySuffix = ".copying"

    /// Removes the temporary files that copies to `path` which did not finish left behind
    /// (invariant 4): those no copy holds locked and nobody changed in the last minute.
    static func removeStaleTemporaries(of path: String) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let prefix = (slash.map { String(path[path.index(after: $0)...]) } ?? path) + "."
        guard let dir = opendir(folder) else { return }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let middle = name.dropFirst(prefix.count).dropLast(temporarySuffix.count)
            if name.hasPrefix(prefix), name.hasSuffix(temporarySuffix), !middle.isEmpty, middle.allSatisfy(\.isHexDigit) { names.append(name) }
        }
        closedir(dir)
        for name in names {
            let candidate = folder + "/" + name
            let fd = open(candidate, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard flock(fd, LOCK_EX | LOCK_NB) == 0, fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
                  time(nil) - info.st_mtim.tv_sec > 60 else { continue }
            unlink(candidate)
        }
    }

    /// Renames `temporary` over `path` and syncs the folder (steps 2 and 3 of a replacement).
    static func replace(_ path: String, with temporary: String, hooks: CopyHooks) throws(StorageError) {
        do throws(StorageError) {
            try hooks.beforeFolderStep?(.rename)
            guard rename(temporary, path) == 0 else { throw StorageError.system("replacing the realm file with its compacted copy", path: path, errno: errno) }
        } catch {
            unlink(temporary)
            throw error
        }
        try syncFolder(of: path, hooks: hooks)
    }

    /// Makes a name change in the folder of `path` durable.
    static func syncFolder(of path: String, hooks: CopyHooks) throws(StorageError) {
        try hooks.beforeFolderStep?(.syncFolder)
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let fd = open(folder, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StorageError.system("opening the folder to sync it", path: folder, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StorageError.system("syncing the folder", path: folder, errno: errno) }
    }
}
