import Foundation
import RealmStorage

// Copies and compaction (the engine's side: RealmStorage/Copy).
//
// `writeCopy` writes what the realm sees, compacted, to a new file: the version it reads, or
// inside a write transaction that version with the write's changes so far. It pins that one
// version while it writes and takes no lock: writers of the file go on meanwhile.
//
// `compact(configuration:)` replaces the file with a compacted copy, only when nothing has it
// open: a `Realm` (a live one, frozen snapshots and the objects they keep alive, a
// `RealmActor`'s) maps the file, and a replaced file would leave it reading, or writing into, a
// file that no longer has a name. So compaction is a static function that refuses, without
// waiting, when the file is open anywhere; `shouldCompactOnLaunch` runs the same compaction
// at the first open.

extension Realm {
    /// Writes a compacted copy of this realm to a new file.
    ///
    /// The copy holds the version this realm reads (for a frozen realm, its version); inside a
    /// write transaction, that version with the changes the write has made so far, which stay
    /// uncommitted here. It holds only live data, with no free space or history, and it is
    /// synced to the disk, file and folder, before the call returns. Other writers of the file
    /// are not held up: the copy reads its one version while they commit.
    ///
    /// ```swift
    /// let backup = URL(fileURLWithPath: "/var/backups/orders-\(date).realm")
    /// try realm.writeCopy(toFile: backup)
    /// let restored = try Realm(fileURL: backup)
    /// ```
    ///
    /// With `encryptionKey` the copy is encrypted with it, whether this realm is or not, under
    /// a new random salt of its own: so a plain realm gets an encrypted copy, and an encrypted
    /// one a copy under another key (a change of key: open the copy with the new key). Without
    /// one the copy is written in the clear, also when this realm is encrypted.
    ///
    /// ```swift
    /// try realm.writeCopy(toFile: rekeyedURL, encryptionKey: newKey)
    /// let rekeyed = try Realm(configuration: Realm.Configuration(fileURL: rekeyedURL, encryptionKey: newKey))
    /// ```
    ///
    /// - Parameters:
    ///   - fileURL: Where to write the copy. No file may exist there.
    ///   - encryptionKey: The 64-byte key to encrypt the copy with; nil: a plain copy.
    /// - Throws: `Realm.Error` with code `invalidArgument` (a key that is not 64 bytes),
    ///   `fileExists` (a file is at `fileURL`), `outOfDiskSpace`, `filePermissionDenied`,
    ///   `fileNotFound` (no such folder), `fileAccess` (another I/O failure), `fileCorrupted`
    ///   (the source is damaged); inside a write, the write's recorded data error. A copy that
    ///   fails leaves no file at `fileURL`.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) throws {
        try writeCopy(toFile: fileURL, encryptionKey: encryptionKey, compression: .none)
    }

    /// How a copy written by `writeCopy(toFile:encryptionKey:compression:)` stores its data.
    ///
    /// ```swift
    /// try realm.writeCopy(toFile: archiveURL, compression: .lz4)
    /// ```
    public struct Compression: Hashable, Sendable, CustomStringConvertible {
        let engine: CopyCompression

        /// A realm file like any other, readable and writable.
        public static let none = Compression(engine: .none)
        /// LZ4-compressed blocks behind a checksummed block table: a smaller file that opens
        /// only read-only (`Configuration.readOnly`), in place, decompressing what is read
        /// into a bounded cache (`Configuration.compressedCacheSize`). For backups, archives
        /// and realms shipped with an application.
        public static let lz4 = Compression(engine: .lz4)

        /// `lz4` or `none`.
        public var description: String { engine == .lz4 ? "lz4" : "none" }
    }

    /// Writes a compacted copy of this realm to a new file, compressed as `compression` says.
    ///
    /// As `writeCopy(toFile:encryptionKey:)` (the same version, synced before it returns),
    /// and with `.lz4` the copy's data is stored in LZ4-compressed blocks, each with a
    /// checksum. Such a copy opens with the same API, read-only: reads decompress the blocks
    /// they touch on demand, keeping at most `compressedCacheSize` bytes of them in memory, so
    /// a copy of any size opens at once. Opened for writing it is refused (`readOnly`): to get
    /// a writable realm from it, write an uncompressed copy of it from a read-only realm.
    ///
    /// ```swift
    /// try realm.writeCopy(toFile: archiveURL, compression: .lz4)
    /// let archive = try Realm(configuration: Realm.Configuration(fileURL: archiveURL, readOnly: true))
    /// let order = archive.object(ofType: Order.self, forPrimaryKey: orderID)
    /// ```
    ///
    /// With an `encryptionKey` too, each block is compressed, then encrypted and
    /// authenticated under keys of the copy's own (a random salt with the key): nothing of the
    /// data is in the file in the clear, and the copy opens read-only with that key
    /// (`Realm.Configuration(fileURL:readOnly:encryptionKey:)`); without it, or with another,
    /// opening throws `decryptionFailed`.
    ///
    /// `progress`, when given, is called on this thread as the copy goes: first with nothing
    /// copied, then about every hundredth of the objects, last once the copy is on disk
    /// (`CopyProgress.isFinished`).
    ///
    /// ```swift
    /// try realm.writeCopy(toFile: backupURL, compression: .none) { progress in
    ///     print("\(Int(progress.fractionCompleted * 100))%")
    /// }
    /// ```
    ///
    /// - Throws: what `writeCopy(toFile:encryptionKey:)` throws.
    public func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil, compression: Compression,
                          progress: ((CopyProgress) -> Void)? = nil) throws {
        if !isFrozen { confinement.verify() }
        let path = try Self.copyDestination(fileURL)
        // This copy of the key is wiped once the copy is written (`wipe` says what cannot be).
        var key = encryptionKey.map { [UInt8]($0) }
        defer { if key != nil { wipe(&key!) } }
        let report = progress.map { progress in { (engine: RealmStorage.CopyProgress) in progress(CopyProgress(engine)) } }
        if let writeTransaction {
            // A write that met a data error is discarded at its end: so would its copy be.
            if let writeFailure { throw writeFailure }
            try engine { () throws(StorageError) in
                try writeTransaction.writeCompactedCopy(to: path, compression: compression.engine, encryptionKey: key, progress: report)
            }
        } else {
            let read = readTransaction
            try engine { () throws(StorageError) in
                try read.writeCompactedCopy(to: path, compression: compression.engine, encryptionKey: key, progress: report)
            }
        }
    }

    /// How far a copy or a compaction has come (`writeCopy(toFile:encryptionKey:compression:progress:)`,
    /// `compact(configuration:progress:)`), counted in objects: copying them is the work.
    ///
    /// ```swift
    /// _ = try Realm.compact(configuration: config) { progress in
    ///     print("\(Int(progress.fractionCompleted * 100))%")
    /// }
    /// ```
    public struct CopyProgress: Sendable, Equatable {
        /// Objects copied so far.
        public let completedObjects: Int
        /// Objects to copy (in a write, its uncommitted ones included).
        public let totalObjects: Int
        /// The copy is written and synced, its name durable: the last report.
        public let isFinished: Bool

        /// From 0 to 1 (1 for a realm with no objects once it is finished).
        public var fractionCompleted: Double {
            totalObjects == 0 ? (isFinished ? 1 : 0) : Double(completedObjects) / Double(totalObjects)
        }

        init(_ engine: RealmStorage.CopyProgress) {
            completedObjects = engine.objectsDone
            totalObjects = engine.objectsTotal
            isFinished = engine.finished
        }
    }

    /// The path to write a copy to; refuses what is not a file URL.
    static func copyDestination(_ fileURL: URL) throws(Realm.Error) -> String {
        guard fileURL.isFileURL else {
            throw Realm.Error(.invalidArgument, "a copy is written to a file: \(fileURL) is not a file URL")
        }
        return fileURL.path
    }

    /// Replaces the realm file of `configuration` with a compacted copy of it, holding only its
    /// live data, when nothing has the file open; returns whether it did.
    ///
    /// Compaction needs the file to itself: it returns false at once, without waiting, while
    /// any `Realm` in this process (live, frozen, or a `RealmActor`'s) or any other process has
    /// the file open, or is opening it. Release them first (a `RealmActor` with `close()`).
    /// The new file is written beside the old one, synced, renamed over it, and the folder
    /// synced: a crash at any instant leaves the old file or the new one, whole. An encrypted
    /// realm (the configuration's `encryptionKey`) stays encrypted with the same key, under a
    /// new random salt.
    ///
    /// ```swift
    /// if try Realm.compact(configuration: config) {
    ///     print("compacted")
    /// }
    /// ```
    ///
    /// - Returns: true when the file was replaced; false when it is open somewhere, or when
    ///   there is no file (or the configuration is of an in-memory realm).
    /// - Throws: `Realm.Error`: `readOnly` for a read-only configuration; what opening the
    ///   file throws (`invalidDatabase`, `fileCorrupted`, `incompatibleLockFile`,
    ///   `decryptionFailed` and `invalidArgument` for a key that does not fit, …);
    ///   `outOfDiskSpace` or `fileAccess` when the copy cannot be written (the file is left as
    ///   it was), or when the folder cannot be synced after the rename (the file is then the
    ///   compacted one, which a power loss may turn back into the old one: both are whole).
    @discardableResult
    public static func compact(configuration: Configuration = .defaultConfiguration) throws -> Bool {
        try compact(configuration: configuration, progress: nil)
    }

    /// As `compact(configuration:)`, telling `progress` (on this thread) how far the copy has
    /// come: first with nothing copied, then about every hundredth of the objects, last once
    /// the compacted file has replaced the old one. Not called when nothing is compacted.
    ///
    /// - Throws: what `compact(configuration:)` throws.
    @discardableResult
    public static func compact(configuration: Configuration = .defaultConfiguration, progress: ((CopyProgress) -> Void)?) throws -> Bool {
        // Before anything else: a missing file (or an in-memory realm) would return false and
        // hide the key's mistake until the first open.
        try configuration.validateEncryptionKey()
        guard configuration.inMemoryIdentifier == nil else { return false }
        guard !configuration.readOnly else {
            throw Realm.Error(.readOnly, "a read-only configuration cannot compact the file; compact with a writable one",
                              path: configuration.path)
        }
        let result: CompactionResult
        do {
            result = try engine { () throws(StorageError) in
                try Store.compact(path: configuration.path, options: configuration.storeOptions,
                                  progress: progress.map { progress in { progress(CopyProgress($0)) } })
            }
        } catch {
            logFailure(error, of: "compacting", configuration)
            throw error
        }
        log(result, of: "Realm.compact", configuration)
        if case .compacted = result { return true }
        return false
    }

    /// Compacts the file before opening it when `shouldCompact` asks for it: only when no
    /// `Realm` in this process or any other has the file open (the first open, as in Realm).
    /// Compacting is an optimisation: a copy that cannot be written (a full disk, a file size
    /// limit, an I/O error on the new file) leaves the file as it was, and the realm opens
    /// uncompacted rather than not at all; the open that follows reports any problem of the
    /// file itself.
    ///
    /// `reason` names the compaction in the log line of its outcome.
    static func compactIfAsked(_ configuration: Configuration, reason: String, _ shouldCompact: (Store) throws(StorageError) -> Bool) {
        guard configuration.inMemoryIdentifier == nil, !configuration.readOnly else { return }
        let logger = configuration.effectiveLogger
        do throws(StorageError) {
            let result = try Store.compact(path: configuration.path, options: configuration.storeOptions, if: shouldCompact)
            log(result, of: reason, configuration)
        } catch {
            logger.log(level: .warn, message: "\(reason) of \(configuration.path) failed, the file opens uncompacted: \(error.message)")
        }
    }

    /// Logs how a compaction ended.
    static func log(_ result: CompactionResult, of reason: String, _ configuration: Configuration) {
        let logger = configuration.effectiveLogger
        switch result {
        case .compacted(let before, let after):
            logger.log(level: .info, message: "\(reason) compacted \(configuration.path) from \(before) to \(after) bytes")
        case .notNeeded:
            logger.log(level: .detail, message: "\(reason) left \(configuration.path) as it is: not needed")
        case .inUse(let why):
            logger.log(level: .info, message: "\(reason) did not compact \(configuration.path): \(why)")
        case .noFile:
            logger.log(level: .detail, message: "\(reason): no file at \(configuration.path) to compact")
        }
    }
}
