import Foundation
import RealmStorage

extension Realm {
    /// Where a realm lives and how it is opened.
    ///
    /// ```swift
    /// var config = Realm.Configuration()
    /// config.fileURL = URL(fileURLWithPath: "/var/lib/app/data.realm")
    /// config.objectTypes = [Dog.self, Person.self]
    /// let realm = try Realm(configuration: config)
    /// ```
    public struct Configuration: @unchecked Sendable {
        // @unchecked: `objectTypes` holds metatypes, which are immutable; the rest are values or
        // Sendable.

        /// The realm file. Ignored when `inMemoryIdentifier` is set.
        public var fileURL: URL?
        /// Opens an in-memory realm with this name instead of a file: every `Realm` with the
        /// same identifier in this process shares it, and it is gone when the last one closes.
        public var inMemoryIdentifier: String?
        /// Open without writing. The file is read as it is: indexes the model classes add or
        /// drop are not applied (lookups work without them, only slower), and nothing else
        /// that needs a write, such as a migration, can happen. A realm on a read-only file
        /// system, or in a folder this process may not write (one shipped with an
        /// application), opens without its lock file; a process that then opens it to write
        /// is refused (`incompatibleLockFile`) until every such reader has closed it. An
        /// LZ4-compressed copy opens only read-only, and nothing is created beside it.
        public var readOnly = false
        /// The version of the schema the model classes describe.
        public var schemaVersion: UInt64 = 0
        /// The model classes stored in this realm: `Object`, `EmbeddedObject` and
        /// `AsymmetricObject` subclasses. Nil takes every `Object` subclass of the process:
        /// those of the file's tables are checked against it when the realm opens (a changed
        /// model throws `schemaMismatch`), and each class gets its table on first use. Embedded
        /// classes a listed class links to need not be listed.
        public var objectTypes: [ObjectBase.Type]?
        /// When the file's schema differs from the model classes, delete the file and start
        /// empty instead of failing (for caches and other data that can be rebuilt).
        public var deleteRealmIfMigrationNeeded = false
        /// Runs when the file's schema version is lower than `schemaVersion` (see `Migration`).
        public var migrationBlock: MigrationBlock?
        /// Called once when the realm is first opened in this process with the file's size and
        /// the bytes its data uses; returning true compacts the file (rewritten with only live
        /// data, replaced atomically) before it opens.
        public var shouldCompactOnLaunch: ((_ totalBytes: Int, _ usedBytes: Int) -> Bool)?
        /// The most versions readers may pin at once. While more are pinned, a write fails with
        /// `maximumNumberOfActiveVersionsExceeded`: `write {}` and `asyncWrite` before their
        /// block runs, a write begun with `beginWrite()` at `commitWrite()`. Nil: no limit.
        public var maximumNumberOfActiveVersions: UInt?
        /// Verify the whole file when the realm opens: every node the version it opens at
        /// reaches (trees, lists, indexes, schema, history, free space) is read and matched
        /// against its checksum, which covers its bytes and its place in the file (the first
        /// open in the process, and again when another process has committed since). Damage then
        /// throws `Realm.Error` `fileCorrupted` from the initializer, and no later read of that
        /// version, nor of versions this process writes on top of it, can meet damage: without
        /// it, damage in a node is found when the node is first read, and a read that cannot
        /// throw (a property getter, a collection's elements) stops the process with a message
        /// naming the damage. Costs a read of the whole file (about a second per GiB; see
        /// BENCHMARKS.md). Realm Swift has no such option (<doc:ComingFromRealmSwift>).
        ///
        /// ```swift
        /// var config = Realm.Configuration(fileURL: uploadedFile)
        /// config.verifyIntegrityOnOpen = true
        /// do { let realm = try Realm(configuration: config) }
        /// catch let error as Realm.Error where error.code == .fileCorrupted { /* refuse the upload */ }
        /// ```
        public var verifyIntegrityOnOpen = false
        /// The most bytes of decompressed data an LZ4-compressed copy (`writeCopy(toFile:
        /// encryptionKey:compression:)`) keeps in memory while it is read; at least four
        /// 16 KiB blocks. Reads decompress the blocks they touch and the oldest are dropped
        /// beyond this, so a larger cache serves repeated reads of a larger part of the file
        /// without decompressing again. Where the system refuses the page-fault handling this
        /// needs (Linux userfaultfd: a seccomp filter, a kernel before 4.3), the whole copy is
        /// decompressed into memory at open instead. The first `Realm` of a file in the
        /// process fixes it for the file. Default 4 MiB.
        ///
        /// ```swift
        /// var config = Realm.Configuration(fileURL: archiveURL, readOnly: true)
        /// config.compressedCacheSize = 64 << 20
        /// ```
        public var compressedCacheSize = 4 << 20
        /// The most bytes of decrypted pages an encrypted realm file (`encryptionKey`) keeps in
        /// memory for each mapping of it; at least four 16 KiB units. Reads decrypt the pages
        /// they touch and the least wanted are dropped beyond this, to be decrypted again when
        /// touched again, so a file of any size opens, queries and writes in bounded memory; a
        /// budget larger than the part of the file a workload touches decrypts each page once.
        /// Where the system refuses the page-fault handling this needs (Linux userfaultfd), each
        /// mapping holds the whole file decrypted instead. The first `Realm` of a file in the
        /// process fixes it for the file. Default 256 MiB. Realm Swift has no such option
        /// (<doc:ComingFromRealmSwift>).
        ///
        /// ```swift
        /// var config = Realm.Configuration(fileURL: url, encryptionKey: key)
        /// config.encryptedCacheSize = 64 << 20
        /// ```
        public var encryptedCacheSize = 256 << 20
        /// Where this configuration's realms log (`Logger`); nil: `Logger.shared`. Not in Realm
        /// Swift, whose logger is global only: a server with several realms can label each.
        ///
        /// ```swift
        /// config.logger = Logger(level: .info) { level, message in print(level, message) }
        /// ```
        public var logger: Logger?
        /// Receives each durable commit and each notification delivery of the file, for
        /// metrics (`RealmEventHandler`; `OpenRealmServer`'s `RealmMetrics`). Nil: none, and
        /// commits measure nothing.
        public var eventHandler: (any RealmEventHandler)?
        /// A commit whose encoding, write and sync take longer than this is logged as a
        /// warning (when the logger logs warnings as the file is opened). Nil: never. Default
        /// 250 ms.
        public var slowCommitThreshold: Duration? = .milliseconds(250)
        /// Tests: how a compressed copy is read (the fallback forced).
        var compressedReading = CompressedReading.onDemand
        /// Tests: how an encrypted file is read (the fallback forced).
        var encryptedReading = EncryptedReading.onDemand
        /// Open the file with the schema it records, for code without its model classes (a
        /// command-line tool, an admin page): `realm.schema` describes the file, and objects
        /// are read and written by class and property name (`realm.dynamicObjects(_:)`,
        /// `DynamicObject`). Model classes are neither discovered nor checked, the file's
        /// schema version is neither compared with `schemaVersion` nor changed, and nothing
        /// migrates or changes indexes; `objectTypes` must be nil or empty (`invalidArgument`
        /// otherwise). Realm Swift has this as the private `dynamic` setting of its Objective-C
        /// configuration (<doc:ComingFromRealmSwift>).
        ///
        /// ```swift
        /// var config = Realm.Configuration(fileURL: url, readOnly: true)
        /// config.isDynamic = true
        /// let realm = try Realm(configuration: config)
        /// for dog in try realm.dynamicObjects("Dog") { print(dog["name"] ?? "nil") }
        /// ```
        public var isDynamic = false
        /// The 64-byte key of an encrypted realm file; any other length is an `invalidArgument`
        /// error when the realm opens. A new file is created encrypted with it; an existing one
        /// opens only with the key it was created with (`decryptionFailed` otherwise, and for a
        /// key given for a plain file or none for an encrypted one, and while another realm of
        /// this process has the file open with another key or none). A realm in memory needs
        /// none and encrypts nothing with one, but every realm of one identifier must give the
        /// key it was first opened with. Keep the key where the file is not: a secret store, or
        /// a file only the service's user may read. This copy of the key is not wiped from
        /// memory (CopiesAndCompaction.md, Encryption).
        public var encryptionKey: Data?

        /// A configuration; every argument has the default a property of the same name has.
        ///
        /// ```swift
        /// let config = Realm.Configuration(fileURL: URL(fileURLWithPath: "/var/lib/app/data.realm"),
        ///                                  schemaVersion: 3, objectTypes: [Dog.self, Person.self])
        /// ```
        ///
        /// The order of the arguments differs from Realm Swift's, which also takes
        /// `shouldCompactOnLaunch` and `seedFilePath` here: set `shouldCompactOnLaunch` as a
        /// property.
        public init(fileURL: URL? = nil, inMemoryIdentifier: String? = nil, readOnly: Bool = false,
                    schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil, deleteRealmIfMigrationNeeded: Bool = false,
                    objectTypes: [ObjectBase.Type]? = nil, encryptionKey: Data? = nil) {
            self.deleteRealmIfMigrationNeeded = deleteRealmIfMigrationNeeded
            self.migrationBlock = migrationBlock
            self.fileURL = fileURL
            self.inMemoryIdentifier = inMemoryIdentifier
            self.readOnly = readOnly
            self.schemaVersion = schemaVersion
            self.objectTypes = objectTypes
            self.encryptionKey = encryptionKey
        }

        private static let storedDefault = Locked(Configuration())

        /// The configuration `Realm()` uses: `default.realm` in the current directory unless
        /// changed.
        public static var defaultConfiguration: Configuration {
            get { storedDefault.withLock { $0 } }
            set { storedDefault.withLock { $0 = newValue } }
        }

        /// `objectTypes` as the model classes they must be.
        ///
        /// - Throws: `invalidSchema` for a listed type that is no `Object` subclass (Realm
        ///   Swift's `ObjectBase` is the root of its model classes; here it is only the root of
        ///   `Object`, so nothing else can be stored).
        func listedClasses() throws(Realm.Error) -> [Object.Type]? {
            try objectTypes?.map { type throws(Realm.Error) in
                guard let model = type as? Object.Type else {
                    throw Realm.Error(.invalidSchema, "\(type) in objectTypes is not a model class: list Object, EmbeddedObject "
                                      + "and AsymmetricObject subclasses", path: path)
                }
                return model
            }
        }

        /// The path the configuration opens.
        var path: String {
            if let inMemoryIdentifier { return inMemoryIdentifier }
            return (fileURL ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("default.realm")).path
        }

        /// Wraps the file when the store opens it: tests put fault-injecting layers here.
        var fileWrapper: (@Sendable (StorageFile) -> StorageFile)?

        /// With `readOnly`: false opens without a lock file when there is none, creating
        /// nothing beside the realm file (`StoreOptions.createsLockFile`): the openrealm tool's
        /// commands that only read (query, export) leave the folder as they found it. Not user
        /// API: a writer of another process cannot open the file meanwhile.
        package var createsLockFile = true

        var storeOptions: StoreOptions {
            var options = StoreOptions(durability: inMemoryIdentifier != nil ? .memOnly : .full, create: !readOnly, readOnly: readOnly,
                                       fileWrapper: fileWrapper)
            options.compressedCacheSize = compressedCacheSize
            options.compressedReading = compressedReading
            options.encryptedCacheSize = encryptedCacheSize
            options.encryptedReading = encryptedReading
            options.encryptionKey = encryptionKey.map { [UInt8]($0) }
            options.createsLockFile = createsLockFile
            return options
        }
    }
}
