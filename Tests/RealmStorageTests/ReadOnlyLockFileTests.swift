import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Read-only opens where the lock file cannot be written (issue 24, point 10): a realm shipped
/// on a read-only file system or in a folder the process may not write opens and reads, as in
/// Realm, and a writer that comes meanwhile does not write under it (ProcessCoordination.swift).
/// A test running as root cannot make a folder it may not write, so the lock file's failure is
/// injected (`lockFileCreationFailure`); the realm file and everything else are real.
@Suite struct ReadOnlyLockFileTests {
    /// A realm file with one table of three rows, closed, and no lock file beside it.
    private static func shippedRealm(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path()
        do {
            let store = try Store.open(path: path)
            let tx = try store.beginWrite()
            let table = try tx.createTable("T", columns: [ColumnSpec(name: "v", type: .int)])
            for v in 0..<3 { try tx.insert(table, values: [.int(Int64(v))]) }
            try tx.commit()
        }
        try FileManager.default.removeItem(atPath: path + ".lock")
        return path
    }

    private static func readOnly(failing failure: Int32) -> StoreOptions {
        var options = StoreOptions(readOnly: true)
        options.lockFileCreationFailure = failure
        return options
    }

    private static func rowCount(_ store: Store) throws -> Int {
        let read = store.beginRead()
        return try #require(try read.table(named: "T")).count()
    }

    /// Failed before: "the folder of the realm file does not exist" (`fileNotFound`).
    @Test(arguments: [EROFS, EACCES])
    func aReadOnlyOpenWithoutALockFileThatCannotBeCreatedReads(failure: Int32) throws {
        let directory = TemporaryDirectory()
        let path = try Self.shippedRealm(in: directory)
        let store = try Store.open(path: path, options: Self.readOnly(failing: failure))
        #expect(try Self.rowCount(store) == 3)
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
        #expect(throws: StorageError.self) { try store.beginWrite() }
        // Open, as far as compaction and deleting the files can tell.
        #expect(ProcessCoordination.isOpenByAnyProcess(path: path))
    }

    /// A writer that comes while such a reader has the realm open creates the lock file, finds
    /// itself alone in it, and is refused before it writes anything (check 2 of the joining).
    @Test func aWriterThatComesWhileAReaderWithoutALockFileReadsIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = try Self.shippedRealm(in: directory)
        do {
            let reader = try ProcessCoordination(path: path, readOnly: true, creationFailure: EROFS)
            try reader.joinRealmFile()
            let writer = try ProcessCoordination(path: path, readOnly: false)
            #expect(writer.openedAlone)
            #expect {
                try writer.joinRealmFile()
            } throws: {
                ($0 as? StorageError)?.code == .incompatibleLockFile
                    && ($0 as? StorageError)?.message.contains("could not create the lock file") == true
            }
        }
        // Once the reader is gone, the writer opens.
        try Store.open(path: path).verify()
    }

    /// A writer that created the lock file and made its check before the reader took the realm
    /// file's byte: the reader finds the lock file then, joins it without a table, and keeps
    /// the writer's writes out while it reads.
    @Test func aReaderWithoutALockFileJoinsOneCreatedWhileItOpened() throws {
        let directory = TemporaryDirectory()
        let path = try Self.shippedRealm(in: directory)
        let writer: ProcessCoordination
        do {
            let reader = try ProcessCoordination(path: path, readOnly: true, creationFailure: EROFS)
            writer = try ProcessCoordination(path: path, readOnly: false)
            try writer.joinRealmFile()
            try reader.joinRealmFile()
            #expect(!writer.tryLockWriter())
        }
        #expect(writer.tryLockWriter())
        writer.unlockWriter()
    }

    /// The lock file exists but this process may not write it: it reads without a table, and
    /// a writer of another process waits until it closes.
    @Test func aReadOnlyOpenWhoseLockFileIsNotWritableReads() throws {
        let directory = TemporaryDirectory()
        let path = try Self.shippedRealm(in: directory)
        let other = try ProcessCoordination(path: path, readOnly: false)
        try other.joinRealmFile()
        do {
            let store = try Store.open(path: path, options: Self.readOnly(failing: EACCES))
            #expect(try Self.rowCount(store) == 3)
            #expect(!other.tryLockWriter())
        }
        #expect(other.tryLockWriter())
        other.unlockWriter()
    }

    /// A read-only open told not to create a lock file (the openrealm tool's) reads without
    /// one and leaves the folder as it was; a writer that comes meanwhile is refused, and opens
    /// once the reader has gone.
    @Test func aReadOnlyOpenThatMayNotCreateALockFileReadsWithoutOne() throws {
        let directory = TemporaryDirectory()
        let path = try Self.shippedRealm(in: directory)
        var options = StoreOptions(create: false, readOnly: true)
        options.createsLockFile = false
        do {
            let store = try Store.open(path: path, options: options)
            #expect(try Self.rowCount(store) == 3)
            #expect(try store.verify().objects == 3)
            #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
            #expect(store.versionsPinnedElsewhere() == nil)
            #expect(throws: StorageError.self) { try store.beginWrite() }
            let writer = try ProcessCoordination(path: path, readOnly: false)
            #expect { try writer.joinRealmFile() } throws: { ($0 as? StorageError)?.code == .incompatibleLockFile }
            try FileManager.default.removeItem(atPath: path + ".lock")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).count == 1)
        try Store.open(path: path).verify()
    }

    /// Where there is a lock file, such a read-only open joins it as every reader does: it sees
    /// the other process's pins, and the writer writes on while it reads.
    @Test func aReadOnlyOpenThatMayNotCreateALockFileJoinsOneThatExists() throws {
        let directory = TemporaryDirectory()
        let path = try Self.shippedRealm(in: directory)
        let other = try ProcessCoordination(path: path, readOnly: false)
        try other.joinRealmFile()
        // The first process lets others in once it has recovered the file (nothing to do here).
        other.finishedOpening()
        var options = StoreOptions(create: false, readOnly: true)
        options.createsLockFile = false
        let store = try Store.open(path: path, options: options)
        #expect(try Self.rowCount(store) == 3)
        #expect(store.versionsPinnedElsewhere() != nil)
        #expect(other.tryLockWriter())
        other.unlockWriter()
    }

    /// A read-only open of a realm that is not there creates nothing, with or without the option.
    @Test(arguments: [true, false])
    func aReadOnlyOpenOfAMissingRealmCreatesNothing(createsLockFile: Bool) throws {
        let directory = TemporaryDirectory()
        var options = StoreOptions(create: false, readOnly: true)
        options.createsLockFile = createsLockFile
        let error = #expect(throws: StorageError.self) { try Store.open(path: directory.path("missing.realm"), options: options) }
        #expect(error?.code == .fileNotFound)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    /// Where a read-only open cannot go on, the error says why, naming the lock file.
    @Test func openingErrorsNameTheCause() throws {
        let directory = TemporaryDirectory()
        let path = try Self.shippedRealm(in: directory)
        var writable = StoreOptions()
        writable.lockFileCreationFailure = EROFS
        let error = #expect(throws: StorageError.self) { try Store.open(path: path, options: writable) }
        #expect(error?.code == .permissionDenied)
        #expect(error?.message.contains("read-only file system") == true)
        #expect(error?.message.contains(path + ".lock") == true)
        #expect(error?.errno == EROFS)

        let missing = #expect(throws: StorageError.self) {
            try Store.open(path: directory.path("missing.realm"), options: Self.readOnly(failing: EROFS))
        }
        #expect(missing?.code == .fileNotFound)
        #expect(missing?.message.contains("no realm file") == true)

        let noFolder = #expect(throws: StorageError.self) {
            try Store.open(path: directory.path("absent/x.realm"), options: StoreOptions(readOnly: true))
        }
        #expect(noFolder?.code == .fileNotFound)
        #expect(noFolder?.message.contains("folder") == true)
    }
}
