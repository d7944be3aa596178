import Foundation
@testable import OpenRealm
import RealmStorage
import Synchronization

// What tests reach below the public API for. Kept apart: a test file that imports
// RealmStorage confuses the Testing macros' expansion.

/// The version of the file's newest commit.
@TestActor func fileVersion(_ folder: TestFolder) throws -> UInt64 {
    try Realm(configuration: folder.configuration()).readTransaction.version.value
}

/// Whether a store of this process still has the file open.
func isOpenInThisProcess(_ configuration: Realm.Configuration) -> Bool {
    Store.isOpen(path: configuration.path)
}

/// How many collection and object observations of `realm` are registered and not ended.
func activeObservations(_ realm: Realm) -> Int {
    realm.notifier?.activeObservationCount ?? 0
}

/// How many change sets the realm's file keeps (a pinned version holds back those after it).
func historyCount(_ realm: Realm) -> Int { realm.readTransaction.top.history.count }

/// The classes whose changes make an observation of `results` read them again.
func observedClassNames<T: Object>(_ results: Results<T>) -> Set<String> {
    Set(ResultsSubject(results, keyPaths: nil).dependencies.map { $0.className() })
}

extension Realm.Configuration {
    /// Sets `inTask` to whether the file was last opened inside a task (on the thread of the
    /// task that opened the realm) rather than on a dispatch queue.
    mutating func recordOpening(inTask: FaultSwitch) {
        fileWrapper = { file in
            inTask.set(withUnsafeCurrentTask { $0 != nil })
            return file
        }
    }

    /// Makes every sync of the file fail while `fault` is on.
    mutating func failSyncs(when fault: FaultSwitch) {
        fileWrapper = { SyncHookFile(wrapping: $0) { (path) throws(StorageError) in
            if fault.isOn { throw StorageError.system("fsync", path: path, errno: EIO) }
        } }
    }

    /// Holds every sync of the file while `gate` is closed.
    mutating func holdSyncs(at gate: SyncGate) {
        fileWrapper = { SyncHookFile(wrapping: $0) { _ in gate.pass() } }
    }

    /// Holds each sync of the file for as long as `hold()` says so (asked every 100 µs).
    mutating func holdSyncs(while hold: @escaping @Sendable () -> Bool) {
        fileWrapper = { SyncHookFile(wrapping: $0) { _ in while hold() { usleep(100) } } }
    }
}

/// Group commit's counts of a realm's store (`Store.groupCommitCounts`), readable from any
/// thread, a sync hook's too: from when a realm of the file is attached.
final class GroupCommitProbe: Sendable {
    private let store = Locked<Store?>(nil)

    func attach(_ realm: Realm) { store.withLock { $0 = realm.store } }

    private var counts: Store.GroupCommitCounts? { store.withLock { $0 }?.groupCommitCounts }

    /// Sync steps that made commits durable, and those commits, since the file was opened.
    var syncsAndCommits: (syncs: Int, commits: Int) { counts.map { ($0.syncs, $0.versions) } ?? (0, 0) }

    /// Threads waiting in `realm.write` for their commits to be durable, now.
    var waitingThreads: Int { counts?.waitingThreads ?? 0 }
}

/// A switch tests flip from any thread.
final class FaultSwitch: Sendable {
    private let on = Atomic<Bool>(false)
    var isOn: Bool { on.load(ordering: .sequentiallyConsistent) }
    func set(_ value: Bool) { on.store(value, ordering: .sequentiallyConsistent) }
}

/// Runs `beforeSync` (with the file's path) before every sync of the file: it may fail the
/// sync (the disk rejecting the flush) or hold it.
final class SyncHookFile: StorageFile {
    let inner: StorageFile
    let beforeSync: @Sendable (String) throws(StorageError) -> Void

    init(wrapping inner: StorageFile, beforeSync: @escaping @Sendable (String) throws(StorageError) -> Void) {
        self.inner = inner
        self.beforeSync = beforeSync
    }

    var path: String { inner.path }
    func size() throws(StorageError) -> UInt64 { try inner.size() }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try inner.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) { try inner.write(bytes, at: offset) }
    func setSize(_ size: UInt64) throws(StorageError) { try inner.setSize(size) }
    func sync() throws(StorageError) {
        try beforeSync(inner.path)
        try inner.sync()
    }
    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }
}

/// Writes, through the engine, a table `name` with one string column per name in `columns`:
/// a table that no model class of this process may match (a configuration without
/// `objectTypes` checks the file's tables against every `Object` subclass).
func createStringTable(_ folder: TestFolder, named name: String, columns: [String]) throws {
    let configuration = folder.configuration()
    let store = try Store.open(path: configuration.path, options: configuration.storeOptions)
    let transaction = try store.beginWrite()
    _ = try transaction.createTable(name, columns: columns.map { ColumnSpec(name: $0, type: .string) })
    _ = try transaction.commit()
}

/// Changes the last byte of the cluster leaf of `table` (a table small enough to be one leaf)
/// in the realm file at `path`, closed; returns the leaf's offset.
func damageClusterLeaf(of table: String, inFileAt path: String) throws -> UInt64 {
    struct NoLeaf: Error {}
    let root: Ref
    do {
        let store = try Store.open(path: path, options: StoreOptions(create: false))
        guard let info = store.beginRead().tables.first(where: { $0.name == table }) else { throw NoLeaf() }
        root = info.clusterRoot
    }
    guard let handle = FileHandle(forUpdatingAtPath: path) else { throw NoLeaf() }
    defer { try? handle.close() }
    try handle.seek(toOffset: root.offset)
    guard let header = try handle.read(upToCount: 16), header.count == 16, header[header.startIndex] == NodeKind.clusterLeaf.rawValue else { throw NoLeaf() }
    let length = header.withUnsafeBytes { UInt64(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self))) }
    try handle.seek(toOffset: root.offset + length - 1)
    guard let last = try handle.read(upToCount: 1)?.first else { throw NoLeaf() }
    try handle.seek(toOffset: root.offset + length - 1)
    try handle.write(contentsOf: [last ^ 0x40])
    return root.offset
}

