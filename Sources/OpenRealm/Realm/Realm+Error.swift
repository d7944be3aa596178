import RealmStorage

extension Realm {
    /// The one error type of OpenRealm: a code to act on, a message that says what went wrong
    /// and how to fix it, the file involved and the operating system's error number.
    ///
    /// ```swift
    /// do {
    ///     let realm = try Realm(fileURL: url)
    /// } catch let error as Realm.Error where error.code == .fileCorrupted {
    ///     // restore a backup
    /// }
    /// ```
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// What kind of failure this is. New codes may be added.
        ///
        /// ```swift
        /// do {
        ///     realm = try Realm(configuration: config)
        /// } catch let error as Realm.Error {
        ///     switch error.code {
        ///     case .fileNotFound: realm = try createSeedFile()
        ///     case .schemaMismatch: print(error.message); throw error
        ///     default: throw error
        ///     }
        /// }
        /// ```
        public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            /// The code's name, which is also how it prints.
            public var rawValue: String
            /// A code by name; the static members are the codes OpenRealm throws.
            public init(rawValue: String) { self.rawValue = rawValue }
            /// The code's name.
            public var description: String { rawValue }

            /// A file operation failed for another reason (an I/O error); `errno` says which.
            public static let fileAccess = Code(rawValue: "fileAccess")
            /// There is no file at the path (a read-only open, or a copy into a missing folder).
            public static let fileNotFound = Code(rawValue: "fileNotFound")
            /// A file exists where a new one was to be written (`writeCopy(toFile:)`).
            public static let fileExists = Code(rawValue: "fileExists")
            /// The process may not read or write the file or its folder.
            public static let filePermissionDenied = Code(rawValue: "filePermissionDenied")
            /// Too many processes have the file open: every reader slot of its lock file is taken.
            public static let alreadyOpen = Code(rawValue: "alreadyOpen")
            /// The realm's lock file (`<name>.lock`) cannot be shared with the processes that
            /// have the realm open: another build made it, or it was deleted or replaced while
            /// they had the realm open. Then the realm cannot be opened, and a process whose
            /// lock file went cannot write (it still reads), until every process that has the
            /// realm open has closed it.
            public static let incompatibleLockFile = Code(rawValue: "incompatibleLockFile")
            /// The file is not a realm file (empty, truncated or foreign).
            public static let invalidDatabase = Code(rawValue: "invalidDatabase")
            /// A node of the file failed its checksum or structural checks: the file is damaged.
            /// The message names the file, the node's offset and its kind.
            public static let fileCorrupted = Code(rawValue: "fileCorrupted")
            /// The file was written in a newer format than this build reads.
            public static let unsupportedFileFormatVersion = Code(rawValue: "unsupportedFileFormatVersion")
            /// The disk is full: the write or copy stored nothing.
            public static let outOfDiskSpace = Code(rawValue: "outOfDiskSpace")
            /// The model classes differ from the file's schema and no migration or
            /// `deleteRealmIfMigrationNeeded` says what to do.
            public static let schemaMismatch = Code(rawValue: "schemaMismatch")
            /// A model class cannot be stored (a listed type that is not an `Object` subclass, an
            /// unsupported property, a primary key of a type that cannot be one).
            public static let invalidSchema = Code(rawValue: "invalidSchema")
            /// An object with this primary key already exists: the write stored nothing.
            public static let duplicatePrimaryKey = Code(rawValue: "duplicatePrimaryKey")
            /// A value is over its limit (16 MiB for strings and data, or a list's element limit).
            public static let valueTooLarge = Code(rawValue: "valueTooLarge")
            /// A value does not fit where it was given (a `create` value that does not fit the
            /// schema, JSON `null` for a required property, an object of another realm).
            public static let invalidArgument = Code(rawValue: "invalidArgument")
            /// A predicate that does not parse, names an unknown property or compares values
            /// of types that do not compare.
            public static let invalidQuery = Code(rawValue: "invalidQuery")
            /// A change was asked for outside a write transaction, or after it ended.
            public static let notInWriteTransaction = Code(rawValue: "notInWriteTransaction")
            /// `write` was called inside a write transaction: writes do not nest.
            public static let alreadyInWriteTransaction = Code(rawValue: "alreadyInWriteTransaction")
            /// A write was asked of a realm opened read-only, or a file that can only be read
            /// (an LZ4-compressed copy) was opened for writing.
            public static let readOnly = Code(rawValue: "readOnly")
            /// The operation is not available in this build (an encrypted LZ4-compressed copy).
            public static let unsupported = Code(rawValue: "unsupported")
            /// More versions are pinned than
            /// `Configuration.maximumNumberOfActiveVersions` allows: release frozen snapshots or
            /// invalidate idle realms.
            public static let maximumNumberOfActiveVersionsExceeded = Code(rawValue: "maximumNumberOfActiveVersionsExceeded")
            /// The task was cancelled before its write began (async writes throw
            /// `CancellationError` for this; the code appears in callbacks).
            public static let cancelled = Code(rawValue: "cancelled")
            /// A frozen realm, object or collection was asked to change or to be observed.
            public static let frozen = Code(rawValue: "frozen")
            /// A write that `RealmActor` merged into one commit with others failed after a
            /// schema change, which cannot be undone on its own: none of the merged writes
            /// was made. Retry them.
            public static let mergedWriteFailed = Code(rawValue: "mergedWriteFailed")
            /// The encryption key does not fit the file: not the key it was written with, no
            /// key for an encrypted realm, or a key for a realm that is not encrypted. The
            /// message says which.
            public static let decryptionFailed = Code(rawValue: "decryptionFailed")
        }

        /// What kind of failure this is: match on it (`error.code == .fileCorrupted`).
        public var code: Code
        /// What went wrong and how to fix it.
        public var message: String
        /// The realm file involved, when there is one.
        public var path: String?
        /// The operating system's error number behind the failure, when there is one.
        public var errno: Int32?

        /// An error with a code and a message; OpenRealm makes these, and code that wraps it
        /// may too.
        ///
        /// ```swift
        /// throw Realm.Error(.invalidArgument, "a title must not be empty")
        /// ```
        public init(_ code: Code, _ message: String, path: String? = nil, errno: Int32? = nil) {
            self.code = code
            self.message = message
            self.path = path
            self.errno = errno
        }

        /// The code, the message and the file: `fileCorrupted: … (file: /path)`.
        public var description: String {
            var text = "\(code): \(message)"
            if let path { text += " (file: \(path))" }
            return text
        }

        init(_ error: StorageError) {
            let code: Code
            switch error.code {
            case .invalidDatabase: code = .invalidDatabase
            case .fileCorrupted: code = .fileCorrupted
            case .unsupportedFormatVersion: code = .unsupportedFileFormatVersion
            case .fileNotFound: code = .fileNotFound
            case .fileExists: code = .fileExists
            case .permissionDenied: code = .filePermissionDenied
            case .alreadyOpen: code = .alreadyOpen
            case .incompatibleLockFile: code = .incompatibleLockFile
            case .outOfDiskSpace: code = .outOfDiskSpace
            case .ioFailure: code = .fileAccess
            case .valueTooLarge: code = .valueTooLarge
            case .invalidArgument: code = .invalidArgument
            case .duplicateKey: code = .duplicatePrimaryKey
            case .transactionEnded: code = .notInWriteTransaction
            case .cancelled: code = .cancelled
            case .mergedWriteFailed: code = .mergedWriteFailed
            case .readOnlyFile: code = .readOnly
            case .decryptionFailed: code = .decryptionFailed
            case .unsupported: code = .unsupported
            }
            self.init(code, error.message, path: error.path, errno: error.errno)
        }
    }
}

/// Runs an engine call, converting its error at the public boundary.
@inline(__always)
func engine<T>(_ body: () throws(StorageError) -> T) throws(Realm.Error) -> T {
    do { return try body() } catch { throw Realm.Error(error) }
}
