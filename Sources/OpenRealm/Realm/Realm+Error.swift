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
        public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
            public var rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }

            public static let fileAccess = Code(rawValue: "fileAccess")
            public static let fileNotFound = Code(rawValue: "fileNotFound")
            /// A file exists where a new one was to be written (`writeCopy(toFile:)`).
            public static let fileExists = Code(rawValue: "fileExists")
            public static let filePermissionDenied = Code(rawValue: "filePermissionDenied")
            public static let alreadyOpen = Code(rawValue: "alreadyOpen")
            /// The realm's lock file (`<name>.lock`) cannot be shared with the processes that
            /// have the realm open: another build made it, or it was deleted or replaced while
            /// they had the realm open. Then the realm cannot be opened, and a process whose
            /// lock file went cannot write (it still reads), until every process that has the
            /// realm open has closed it.
            public static let incompatibleLockFile = Code(rawValue: "incompatibleLockFile")
            public static let invalidDatabase = Code(rawValue: "invalidDatabase")
            public static let fileCorrupted = Code(rawValue: "fileCorrupted")
            public static let unsupportedFileFormatVersion = Code(rawValue: "unsupportedFileFormatVersion")
            public static let outOfDiskSpace = Code(rawValue: "outOfDiskSpace")
            public static let schemaMismatch = Code(rawValue: "schemaMismatch")
            public static let invalidSchema = Code(rawValue: "invalidSchema")
            public static let duplicatePrimaryKey = Code(rawValue: "duplicatePrimaryKey")
            public static let valueTooLarge = Code(rawValue: "valueTooLarge")
            public static let invalidArgument = Code(rawValue: "invalidArgument")
            /// A predicate that does not parse, names an unknown property or compares values
            /// of types that do not compare.
            public static let invalidQuery = Code(rawValue: "invalidQuery")
            public static let notInWriteTransaction = Code(rawValue: "notInWriteTransaction")
            public static let alreadyInWriteTransaction = Code(rawValue: "alreadyInWriteTransaction")
            /// A write was asked of a realm opened read-only, or a file that can only be read
            /// (an LZ4-compressed copy) was opened for writing.
            public static let readOnly = Code(rawValue: "readOnly")
            public static let unsupported = Code(rawValue: "unsupported")
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
        }

        public var code: Code
        /// What went wrong and how to fix it.
        public var message: String
        /// The realm file involved, when there is one.
        public var path: String?
        /// The operating system's error number behind the failure, when there is one.
        public var errno: Int32?

        public init(_ code: Code, _ message: String, path: String? = nil, errno: Int32? = nil) {
            self.code = code
            self.message = message
            self.path = path
            self.errno = errno
        }

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
