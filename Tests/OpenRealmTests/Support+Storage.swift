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

/// How many collection and object observations of `realm` are registered and not ended.
func activeObservations(_ realm: Realm) -> Int {
    realm.notifier?.activeObservationCount ?? 0
}

extension Realm.Configuration {
    /// Makes every sync of the file fail while `fault` is on.
    mutating func failSyncs(when fault: FaultSwitch) {
        fileWrapper = { FailingSyncFile(wrapping: $0, failing: fault) }
    }
}

/// A switch tests flip from any thread.
final class FaultSwitch: Sendable {
    private let on = Atomic<Bool>(false)
    var isOn: Bool { on.load(ordering: .sequentiallyConsistent) }
    func set(_ value: Bool) { on.store(value, ordering: .sequentiallyConsistent) }
}

/// Fails every sync while its switch is on (the disk rejecting the flush).
final class FailingSyncFile: StorageFile {
    let inner: StorageFile
    let failing: FaultSwitch

    init(wrapping inner: StorageFile, failing: FaultSwitch) {
        self.inner = inner
        self.failing = failing
    }

    var path: String { inner.path }
    func size() throws(StorageError) -> UInt64 { try inner.size() }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try inner.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) { try inner.write(bytes, at: offset) }
    func setSize(_ size: UInt64) throws(StorageError) { try inner.setSize(size) }
    func sync() throws(StorageError) {
        if failing.isOn { throw StorageError.system("fsync", path: inner.path, errno: EIO) }
        try inner.sync()
    }
    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }
}
