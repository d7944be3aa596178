/// How commits reach the disk.
package enum Durability: Sendable, Equatable {
    /// Every commit is synced before it is acknowledged (one sync per commit).
    case full
    /// No syncs: a crash of the machine (not of the process) may lose recent commits, or
    /// the file. For scratch data and bulk loads that are redone on failure.
    case unsafe
    /// Nothing on disk: the store lives in memory and is gone when its last user closes it.
    case memOnly
}

package struct StoreOptions: Sendable {
    package var durability: Durability = .full
    /// Create the file when it does not exist.
    package var create = true
    /// Open without writing; several read-only openers may share the file.
    package var readOnly = false
    /// With `readOnly`: false opens without a lock file when there is none, creating nothing
    /// beside the realm file (the openrealm tool's read-only commands). A writer of another
    /// process cannot open the file meanwhile (ProcessCoordination.swift has the argument).
    /// Ignored without `readOnly`: a writer always has a lock file.
    package var createsLockFile = true
    package var limits: TreeLimits = .standard
    /// Wraps the opened file: tests put fault- and crash-injecting layers here.
    package var fileWrapper: (@Sendable (StorageFile) -> StorageFile)?
    /// At most this many versions follow a root slot through run headers before a commit
    /// writes a slot again (FileHeader.swift, chained roots); 1 writes a slot at every commit.
    /// Space the versions after the last slot free is reused only once a newer slot is durable,
    /// so this bounds that too, and with it the free list every commit writes. 16 measured
    /// best for one-object commits (callgrind, W2: 148k instructions a commit, 151k with 32,
    /// 156k with 64; a slot costs about 10 µs more of its commit's sync, a sixteenth of that
    /// a commit). Tests use short chains to cross their ends often.
    package var chainLength: Int = 16
    /// The least address space a mapping of the file reserves (Recovery.reservation). Tests
    /// make it small, to grow files past another store's mapping.
    package var minimumMapping: Int = 1 << 30
    /// Changed rows, and then changed leaves of the cluster trees or of the index trees, from
    /// which a commit encodes those leaves on two threads (LeafPreEncoding.swift); `Int.max`
    /// keeps every commit on one. Tests lower it so that small workloads take the hand-over.
    package var parallelEncodingLeaves: Int = LeafPreEncoding.minimumLeaves
    /// Tests: opening the lock file for writing fails with this errno, as on a read-only file
    /// system (EROFS) or where the process may not write (EACCES), which a test running as
    /// root cannot otherwise see (ProcessCoordination.swift).
    package var lockFileCreationFailure: Int32?
    /// Tests: wraps the files copies and compactions write, and stops them before a change to
    /// the folder (CopyFile.swift).
    package var copyHooks = CopyHooks()
    /// The most bytes of decompressed blocks an LZ4-compressed copy keeps in memory while it
    /// is read in place (File/FaultRegion.swift; at least four blocks).
    package var compressedCacheSize = 4 << 20
    /// How an LZ4-compressed copy is read: on demand, or (tests of the fallback) inflated whole.
    package var compressedReading = CompressedReading.onDemand
    /// The most bytes of decrypted pages each mapping of an encrypted file keeps in memory
    /// (File/EncryptedFile.swift; at least four 16 KiB units).
    package var encryptedCacheSize = EncryptedFile.defaultCacheSize
    /// How an encrypted file is read: on demand, or (tests of the fallback) decrypted whole.
    package var encryptedReading = EncryptedReading.onDemand
    /// How nodes are sealed (Nodes/NodeSealing.swift): checksums (format 4, every plain file),
    /// or keyed tags with 16-byte footprints, which encrypted files (format 6) use. An
    /// engine and test option for now, so that MACs, footprints and 16-byte allocation run on
    /// plain files before any cipher exists. Nothing in the file says which: a file must be
    /// opened with the sealing it was created with (else every node fails as `fileCorrupted`),
    /// and so must its copies and compactions, which keep the store's.
    package var sealing: NodeSealing = .checksum
    /// The 64-byte key of an encrypted file (File/EncryptionHeader.swift); nil for a plain
    /// file. A file in memory needs none: one given is checked for its length and unused.
    package var encryptionKey: [UInt8]?

    package init(durability: Durability = .full, create: Bool = true, readOnly: Bool = false,
                 limits: TreeLimits = .standard, fileWrapper: (@Sendable (StorageFile) -> StorageFile)? = nil,
                 chainLength: Int = 16) {
        precondition(chainLength >= 1, "a chain holds at least the slot's own version")
        self.durability = durability
        self.create = create
        self.readOnly = readOnly
        self.limits = limits
        self.fileWrapper = fileWrapper
        self.chainLength = chainLength
    }
}
