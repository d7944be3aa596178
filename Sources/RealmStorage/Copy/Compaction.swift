#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Compaction: the realm file replaced by a compacted copy of its newest version, when nobody
// has it open.
//
// Nobody may have the old file open while it is replaced: a reader would go on reading the
// old file, a writer would write into it and lose its commits with it. The protocol:
//
//   1. Refuse at once if this process has a store for the file, or any process holds the
//      file's presence (`Store.isOpenByAnyProcess`): cheap, and without waiting for anyone.
//   2. Open a store of its own, not in the registry of this process's stores: no other
//      thread can attach to it and read the file about to be replaced. (Another thread that
//      opens the realm now opens its own store, which meets this one in the lock file as
//      another process would.)
//   3. Hold the lock file's opening byte without waiting (nil: someone is joining right now,
//      so refuse). From here until the byte is released, nobody can join (openers, of this
//      process too, wait for the byte).
//   4. With the byte held, check that nobody else is present in the lock file (someone may
//      have joined between 1 and 3); if someone is, refuse.
//   5. Write the compacted copy to `<path>.compacting` and sync it (CopyFile.swift). An
//      encrypted file's copy is encrypted with the same key under a new salt.
//   6. Close the store: the next opener must find itself alone and read the new file, not
//      join a table that describes the old one.
//   7. Rename the copy over the file, sync the folder, release the opening byte.
//
// A crash before 7's rename leaves the old file (never written here) and a stray
// `.compacting` file, removed by the next compaction; after it, the new file, whole because it
// was synced before it got its name (CopyFile.swift, invariant 1).
//
// Compaction never waits for anyone: every refusal is an answer (`CompactionResult.inUse`).
// An opener that arrives during 5-7 waits for the byte, as it waits for any opener.

/// What a compaction did.
package enum CompactionResult: Sendable, Equatable {
    /// The file was replaced by its compacted copy.
    case compacted(sizeBefore: UInt64, sizeAfter: UInt64)
    /// The file is open (the reason says where), so it was left as it is.
    case inUse(String)
    /// The caller's test said the file need not be compacted.
    case notNeeded
    /// There is no file at the path.
    case noFile
}

extension Store {
    /// Replaces the realm file at `path` with a compacted copy of its newest version, when no
    /// store of this or any other process has it open and `shouldCompact` asks for it (it gets
    /// the store opened for the compaction: `spaceUsage` tells what it would gain).
    ///
    /// - Throws: what opening the file throws; `outOfDiskSpace`, `ioFailure` when the copy
    ///   cannot be written (the file is then left as it is); `ioFailure` when the folder cannot
    ///   be synced after the rename (the file is then the compacted one, which a power loss
    ///   may turn back into the old one: both are whole).
    package static func compact(path: String, options: StoreOptions,
                                if shouldCompact: (Store) throws(StorageError) -> Bool = { _ in true },
                                progress: CopyProgressHandler? = nil) throws(StorageError) -> CompactionResult {
        guard options.durability != .memOnly, !options.readOnly else {
            throw StorageError(.invalidArgument, "only a realm file opened for writing can be compacted", path: path)
        }
        guard access(path, F_OK) == 0 else { return .noFile }
        if isOpen(path: path) { return .inUse("the realm is open in this process") }
        if isOpenByAnyProcess(path: path) { return .inUse("the realm is open in another process") }
        let temporary = path + ".compacting"
        var hold: OpeningHold?
        let sizes: (before: UInt64, after: UInt64)
        let counter: CopyProgressCounter?
        do {
            // Step 2: unregistered, and closed at the end of this scope (step 6). Never creates
            // a file (one removed since the check above is not to be compacted).
            var opening = options
            opening.create = false
            let store = try Store(path: path, options: opening)
            guard try shouldCompact(store) else { return .notNeeded }
            guard let held = try holdOffOpeners(path: path) else { return .inUse("another process is opening the realm") }
            hold = held
            guard !store.otherProcessesHaveTheFile else { return .inUse("the realm was opened meanwhile") }
            unlink(temporary)
            let read = store.beginRead()
            var source = CopySource(top: read.top, schemaBlob: try read.schemaBlob(), reading: read.context)
            source.progress = progress
            // An encrypted file stays encrypted under its key, with a new salt (opening checked
            // the key against the file: EncryptionHeader.swift, E8).
            try source.seal(for: store, encryptionKey: store.file is EncryptedFile ? options.encryptionKey : nil)
            let copy = try CopyFile.write(source, to: temporary, hooks: options.copyHooks)
            counter = copy.counter
            // The file keeps its permissions: a realm kept private must not become readable
            // by others through a compaction.
            var status = stat()
            if stat(path, &status) == 0 { chmod(temporary, status.st_mode & 0o7777) }
            sizes = (try store.spaceUsage().fileSize, copy.slot.logicalSize)
        }
        try CopyFile.replace(path, with: temporary, hooks: options.copyHooks)
        counter?.finish()
        withExtendedLifetime(hold) {}
        return .compacted(sizeBefore: sizes.before, sizeAfter: sizes.after)
    }
}
