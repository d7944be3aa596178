import Foundation
import Testing
@testable import OpenRealm

/// How a round-trip test reads back what it wrote: from the file it wrote, or from a
/// compacted copy (`writeCopy`) made after the write committed, or made inside the write
/// before it was cancelled (so only the copy holds the write's changes).
///
/// The LZ4 cases write an LZ4-compressed copy, open it read-only and write an uncompressed
/// copy of that (the way back to a writable file), which the test then reads and writes: so
/// every value passes through the compressed copy, read in place.
enum CopyReopening: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sameFile, copyAfterCommit, copyInsideWrite, lz4AfterCommit, lz4InsideWrite

    var testDescription: String { rawValue }

    /// Runs `body` in a write of `realm` and returns the configuration of the file that holds
    /// its changes: `realm`'s own, or a new copy in `folder`. With `copyInsideWrite` the
    /// write is cancelled after the copy: the source keeps its data from before.
    func write(_ realm: Realm, in folder: TestFolder, _ body: () throws -> Void) throws -> Realm.Configuration {
        realm.beginWrite()
        do {
            try body()
        } catch {
            realm.cancelWrite()
            throw error
        }
        var copy = realm.configuration
        copy.fileURL = folder.url.appendingPathComponent("copy-\(UUID().uuidString).realm")
        switch self {
        case .sameFile:
            try realm.commitWrite()
            return realm.configuration
        case .copyAfterCommit:
            try realm.commitWrite()
            try realm.writeCopy(toFile: copy.fileURL!)
        case .copyInsideWrite:
            defer { realm.cancelWrite() }
            try realm.writeCopy(toFile: copy.fileURL!)
        case .lz4AfterCommit, .lz4InsideWrite:
            var compressed = realm.configuration
            compressed.fileURL = folder.url.appendingPathComponent("copy-\(UUID().uuidString).realmz")
            compressed.readOnly = true
            if self == .lz4AfterCommit {
                try realm.commitWrite()
                try realm.writeCopy(toFile: compressed.fileURL!, compression: .lz4)
            } else {
                defer { realm.cancelWrite() }
                try realm.writeCopy(toFile: compressed.fileURL!, compression: .lz4)
            }
            try Realm(configuration: compressed).writeCopy(toFile: copy.fileURL!)
        }
        try RoundTripTests.verify(copy)
        return copy
    }
}
