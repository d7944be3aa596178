// Opening a realm: from a configuration to a live realm on a checked file.
//
//   1. Check an encryption key's length (the store checks it against the file).
//   2. Compact on launch when `shouldCompactOnLaunch` asks, and upgrade a file of a format
//      before node checksums by the same compacting copy (Realm+Copy.swift). Both come
//      before this realm's store opens: a compaction replaces the file, which it does only
//      when no realm of any process has it open (the first open, as in Realm); one that
//      cannot be done leaves the file as it was, and the realm opens uncompacted.
//   3. Open the store, check the whole file when `verifyIntegrityOnOpen` asks, and compare
//      the schema recorded in the file with the model classes: a newer schema version is
//      refused; differences are migrated (a raised schemaVersion), or the file is deleted
//      (`deleteRealmIfMigrationNeeded`), or refused with what differs and how to fix it. A
//      dynamic realm (`isDynamic`) skips this and step 4's migration, binding and recording:
//      it takes the schema the file records (Realm+Dynamic.swift).
//   4. Make the realm (its designated initializer, Realm.swift), migrate (Realm+Migration.swift),
//      bind the listed classes, record the schema version and the index changes in one write,
//      and give it its context last (RealmContext.swift: how work from elsewhere reaches it).

import Foundation
import RealmStorage

extension Realm.Configuration {
    /// Throws `invalidArgument` when `encryptionKey` is not 64 bytes: every entry point that
    /// takes a configuration checks it first, before it looks at the file (or the lack of one).
    func validateEncryptionKey() throws {
        guard let key = encryptionKey else { return }
        var bytes = [UInt8](key)
        defer { wipe(&bytes) }
        try engine { () throws(StorageError) in try EncryptionHeader.validate(bytes) }
    }
}

extension Realm {
    /// Opens the default realm (`Realm.Configuration.defaultConfiguration`).
    public convenience init(isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(configuration: .defaultConfiguration, isolation: isolation)
    }

    /// Opens the realm file at `fileURL` with the default configuration's other settings.
    public convenience init(fileURL: URL, isolation: isolated (any Actor)? = #isolation) throws {
        var configuration = Configuration.defaultConfiguration
        configuration.fileURL = fileURL
        configuration.inMemoryIdentifier = nil
        try self.init(configuration: configuration, isolation: isolation)
    }

    /// Opens a realm, confined to the calling actor (`isolation`), or to the calling thread
    /// when called outside any actor (Confinement.swift).
    ///
    /// As in Realm, model classes that only add or drop `@Persisted(indexed: true)` need no
    /// migration: the indexes change when the realm opens (or, for classes not listed in
    /// `objectTypes`, with the first write after the class is first used). A read-only realm
    /// leaves the file as it is and reads without the new indexes.
    ///
    /// - Throws: `Realm.Error`: `fileNotFound` (read-only and missing), `invalidDatabase`,
    ///   `fileCorrupted`, `incompatibleLockFile` (another process opened it with a different
    ///   lock file layout, or has it open through a lock file deleted or replaced since),
    ///   `schemaMismatch`, `invalidSchema`,
    ///   `invalidArgument` (an encryption key that is not 64 bytes, or `objectTypes` listed for a
    ///   realm that `isDynamic`), `decryptionFailed` (a key
    ///   that is not the file's, a key for a plain file, or none for an encrypted one; or, while
    ///   another realm of this process has the file or in-memory identifier open, not its key),
    ///   `readOnly` (an LZ4-compressed copy opened without `readOnly`).
    public convenience init(configuration: Configuration, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(configuration: configuration, confinement: .of(isolation))
    }

    /// Opens a realm confined to `confinement`; a failure is logged (Logger.swift) and thrown.
    convenience init(configuration: Configuration, confinement: Confinement) throws {
        do {
            try self.init(opening: configuration, confinement: confinement)
        } catch {
            Self.logFailure(error, of: "opening", configuration)
            throw error
        }
        announceOpening()
    }

    private convenience init(opening configuration: Configuration, confinement: Confinement) throws {
        // A key of the wrong length is refused before anything, a compaction on launch included;
        // the store checks it against the file (EncryptionHeader.swift).
        try configuration.validateEncryptionKey()
        if let shouldCompact = configuration.shouldCompactOnLaunch {
            Realm.compactIfAsked(configuration, reason: "shouldCompactOnLaunch") { (store) throws(StorageError) in
                let usage = try store.spaceUsage()
                let used = Int(store.beginRead().slot.logicalSize) - Int(usage.freeBytes)
                return shouldCompact(Int(usage.fileSize), used)
            }
        }
        // A file of a format before node checksums is upgraded by the same compacting copy,
        // which writes the current format; where it cannot be (read-only, open elsewhere, no
        // room), the file opens as it is and its nodes are read unverified.
        if Realm.fileFormat(at: configuration.path).map({ $0 < FileHeader.nodeChecksumFormat }) == true {
            Realm.compactIfAsked(configuration, reason: "Upgrading the file format") { _ throws(StorageError) in true }
        }
        var store = try engine { () throws(StorageError) in try Store.open(path: configuration.path, options: configuration.storeOptions) }
        var read = store.beginRead()
        if configuration.verifyIntegrityOnOpen {
            try engine { () throws(StorageError) in try store.verifyIntegrity(of: read) }
        }
        if configuration.isDynamic {
            // The file's own schema: nothing to compare, migrate or record (Realm+Dynamic.swift).
            guard configuration.objectTypes?.isEmpty ?? true else {
                throw Realm.Error(.invalidArgument, "a dynamic realm reads the schema the file records: leave objectTypes nil or empty",
                                  path: configuration.path)
            }
            self.init(store: store, reading: read, configuration: configuration, confinement: confinement)
            context = RealmContext(for: self)
            return
        }
        let stored = try engine { () throws(StorageError) in try read.schemaBlob() }.flatMap(SchemaRecord.init)
        if let stored, stored.schemaVersion > configuration.schemaVersion {
            throw Realm.Error(.schemaMismatch, "the file has schema version \(stored.schemaVersion), newer than this configuration's "
                              + "\(configuration.schemaVersion); open it with the matching schemaVersion, or with isDynamic to read it "
                              + "without model classes", path: configuration.path)
        }
        let problems = try Realm.schemaProblems(read, configuration, classes: try configuration.listedClasses() ?? ModelClassDiscovery.all)
        let versionRaised = stored.map { $0.schemaVersion < configuration.schemaVersion } ?? false
        var migrate = false
        if !problems.isEmpty {
            if versionRaised && configuration.objectTypes != nil && !configuration.readOnly {
                migrate = true
            } else if configuration.deleteRealmIfMigrationNeeded && configuration.inMemoryIdentifier == nil && !configuration.readOnly {
                _ = consume read
                _ = consume store
                try Realm.deleteFiles(for: configuration)
                store = try engine { () throws(StorageError) in try Store.open(path: configuration.path, options: configuration.storeOptions) }
                read = store.beginRead()
            } else {
                let hint = configuration.objectTypes == nil
                    ? "list the model classes in objectTypes, increase schemaVersion and migrate"
                    : "increase schemaVersion (a migrationBlock can convert the data)"
                throw Realm.Error(.schemaMismatch, "migration is required: " + problems.joined(separator: "; ") + ". To open it, \(hint)",
                                  path: configuration.path)
            }
        } else if versionRaised && configuration.migrationBlock != nil && !configuration.readOnly {
            migrate = true
        }
        self.init(store: store, reading: read, configuration: configuration, confinement: confinement)
        if migrate { try self.migrate(from: stored?.schemaVersion ?? 0) }
        for type in try configuration.listedClasses() ?? [] { _ = try binding(for: type) }
        try recordSchemaVersionAndIndexes()
        context = RealmContext(for: self)
    }

    /// The format version in the header of the realm file at `path`; nil when there is no
    /// readable realm header there (opening reports why).
    private static func fileFormat(at path: String) -> UInt32? {
        let fd = systemOpen(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 12)
        guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 12, 0) }) == 12,
              Array(header[0..<8]) == FileHeader.magic else { return nil }
        return header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self)) }
    }

    /// Every difference between the file's tables and the model classes: those listed in
    /// `objectTypes`, or without it every `Object` subclass of the process (`classes`), as
    /// Realm Swift checks every class it finds. Either way a changed model is refused here, at
    /// open, rather than at its first use.
    private static func schemaProblems(_ read: ReadTransaction, _ configuration: Configuration, classes: [Object.Type]) throws -> [String] {
        func problem(_ schema: ObjectSchema, _ info: TableInfo) -> String? {
            do {
                _ = try TableBinding(schema: schema, info: info, path: configuration.path) { key in read.top.table(key ?? TableKey(0))?.name }
                return nil
            } catch {
                return error.message.replacingOccurrences(of: ". Increase schemaVersion and migrate", with: "")
            }
        }
        var problems: [String] = []
        if configuration.objectTypes != nil {
            for type in classes {
                let schema = try ObjectSchema.of(type)
                guard let info = read.top.table(named: schema.className) else { continue }
                if let problem = problem(schema, info) { problems.append(problem) }
            }
            return problems
        }
        // Discovered classes: only those of the file's tables are looked at, and a class whose
        // model is invalid is left to fail at its first use, as before (a program may define
        // classes it never stores). Several classes may share a name (`className()`, or
        // versions of one model kept side by side): a table is refused only when none of them
        // matches it. Their schemas are not cached, so that `ObjectSchema.knownClass` keeps
        // naming the classes the program used.
        var byName: [String: [Object.Type]] = [:]
        for type in classes { byName[type.className(), default: []].append(type) }
        for info in read.top.tables {
            guard let candidates = byName[info.name] else { continue }
            let found = candidates.compactMap { try? ObjectSchema.discoveredWithoutCaching($0) }.map { problem($0, info) }
            if let first = found.first, found.allSatisfy({ $0 != nil }) { problems.append(first!) }
        }
        return problems
    }

    /// Stores the configuration's schema version in the file when it changed, and makes the
    /// index changes of the configured classes: one write transaction, only when needed.
    private func recordSchemaVersionAndIndexes() throws {
        guard !configuration.readOnly else { return }
        let stored = try engine { () throws(StorageError) in try readTransaction.schemaBlob() }.flatMap(SchemaRecord.init)
        let versionChanged = stored?.schemaVersion != configuration.schemaVersion
        guard versionChanged || !pendingIndexChanges.isEmpty else { return }
        // `beginWrite` makes the pending index changes.
        try write {
            guard versionChanged else { return }
            try engine { () throws(StorageError) in
                try writeTransaction!.setSchemaBlob(SchemaRecord(schemaVersion: configuration.schemaVersion).encoded)
            }
        }
    }

    /// The schema version of the file, as recorded by the last configuration that wrote it.
    public var schemaVersionOfFile: UInt64 {
        ((try? readTransaction.schemaBlob()).flatMap { $0 }.flatMap(SchemaRecord.init))?.schemaVersion ?? 0
    }
}
