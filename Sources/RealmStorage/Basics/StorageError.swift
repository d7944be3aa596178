#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every failure the engine reports. The API layer converts it to `Realm.Error`.
///
/// The engine never traps on bad input: corrupt or foreign files, failed I/O and values over
/// the limits all arrive here with a code, a message that says what to do, the file's path and
/// the operating system's error number where there is one.
package struct StorageError: Error, Sendable, CustomStringConvertible, Equatable {
    package enum Code: String, Sendable, Equatable {
        /// The path exists but is not a realm file (wrong magic, empty, a directory).
        case invalidDatabase
        /// The file is a realm file but its contents fail a structural check.
        case fileCorrupted
        /// Written by a newer build with a format this build does not know.
        case unsupportedFormatVersion
        case fileNotFound
        /// A file is where a new one was to be created (the destination of a copy).
        case fileExists
        case permissionDenied
        /// Another process holds the file open in a way that excludes this opener.
        case alreadyOpen
        /// The lock file beside the realm was written by something else (another build's
        /// layout, or not a lock file at all) while a process that made it has the file open;
        /// or it was deleted or replaced while processes had the file open: they no longer
        /// meet in one lock file, so opening and writing are refused until they have closed.
        case incompatibleLockFile
        case outOfDiskSpace
        /// Any other failure of a read, write, sync or truncate.
        case ioFailure
        /// A string or binary value over 16 MiB, or a list over the engine's limit.
        case valueTooLarge
        /// Misuse of the engine API by the layer above (unknown table or column, wrong type).
        case invalidArgument
        /// A unique index already holds the value.
        case duplicateKey
        /// A write transaction was already committed, rolled back or poisoned by an I/O error.
        case transactionEnded
        /// The task waiting for the write lane was cancelled before it got it.
        case cancelled
        /// A write committed together with this one failed and could not be undone on its
        /// own, so none of them was made (WriteTransaction+Relay.swift).
        case mergedWriteFailed
        /// The file can only be opened read-only (an LZ4-compressed copy: Compressed/).
        case readOnlyFile
        /// The encryption key does not fit the file: another key than the file's, no key for
        /// an encrypted file, or a key for a plain one (File/EncryptionHeader.swift).
        case decryptionFailed
        /// A combination the engine does not offer yet (an encrypted LZ4-compressed copy).
        case unsupported
    }

    package var code: Code
    package var message: String
    package var path: String?
    package var errno: Int32?

    package init(_ code: Code, _ message: String, path: String? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.errno = errno
    }

    /// Maps an errno from a failed system call to the code a caller can act on.
    package static func system(_ operation: String, path: String?, errno err: Int32) -> StorageError {
        let code: Code
        switch err {
        case ENOENT: code = .fileNotFound
        case EACCES, EPERM, EROFS: code = .permissionDenied
        case ENOSPC, EDQUOT, EFBIG: code = .outOfDiskSpace
        default: code = .ioFailure
        }
        let reason = String(cString: strerror(err))
        return StorageError(code, "\(operation) failed: \(reason)", path: path, errno: err)
    }

    package var description: String {
        var text = "\(code.rawValue): \(message)"
        if let path { text += " (file: \(path))" }
        if let errno { text += " [errno \(errno)]" }
        return text
    }

    package static func == (a: StorageError, b: StorageError) -> Bool {
        a.code == b.code && a.message == b.message && a.path == b.path && a.errno == b.errno
    }
}
