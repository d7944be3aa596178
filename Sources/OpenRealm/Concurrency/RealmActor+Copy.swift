import Dispatch
import Foundation
import RealmStorage

extension RealmActor {
    /// Writes a compacted copy of the newest version of the realm to a new file (as
    /// `Realm.writeCopy(toFile:encryptionKey:)`).
    ///
    /// The actor only pins the newest version (opening its realm if it has not yet); the copy
    /// is written on a dispatch queue, off the actor and off the cooperative thread pool, so
    /// writes queued on the actor and every other writer go on while it is written.
    ///
    /// ```swift
    /// let store = RealmActor(configuration: config)
    /// try await store.writeCopy(toFile: backupURL)
    /// ```
    ///
    /// - Throws: what `Realm.writeCopy(toFile:encryptionKey:)` throws, and what opening the
    ///   realm throws.
    public nonisolated func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil) async throws {
        try await writeCopy(toFile: fileURL, encryptionKey: encryptionKey, compression: .none)
    }

    /// Writes a compacted copy of the newest version of the realm to a new file, compressed
    /// as `compression` says (as `Realm.writeCopy(toFile:encryptionKey:compression:)`), off
    /// the actor as `writeCopy(toFile:encryptionKey:)`.
    ///
    /// ```swift
    /// try await store.writeCopy(toFile: archiveURL, compression: .lz4)
    /// ```
    ///
    /// `progress`, when given, is called on the copying thread as
    /// `Realm.writeCopy(toFile:encryptionKey:compression:progress:)` describes.
    ///
    /// - Throws: what `Realm.writeCopy(toFile:encryptionKey:)` throws, and what opening the
    ///   realm throws.
    public nonisolated func writeCopy(toFile fileURL: URL, encryptionKey: Data? = nil, compression: Realm.Compression,
                                      progress: (@Sendable (Realm.CopyProgress) -> Void)? = nil) async throws {
        let path = try Realm.copyDestination(fileURL)
        let key = encryptionKey.map { [UInt8]($0) }
        let version = try await newestVersion()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Swift.Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result { () throws(Realm.Error) in
                    try engine { () throws(StorageError) in
                        try version.writeCompactedCopy(to: path, compression: compression.engine, encryptionKey: key,
                                                       progress: progress.map { progress in { progress(Realm.CopyProgress($0)) } })
                    }
                })
            }
        }
    }

    /// The newest committed version of the file, pinned until the returned transaction goes.
    private func newestVersion() throws -> ReadTransaction {
        try realm().store.beginRead()
    }
}
