import RealmStorage

extension Realm {
    /// What an encrypted realm's decrypted pages are doing in this process: how much memory
    /// they take against `Realm.Configuration.encryptedCacheSize`, and how often pages had to
    /// be read and decrypted again. An OpenRealm addition (Realm Swift has no such figures):
    /// the budget should cover the working set, and these say whether it does.
    ///
    /// The figures are those of the file's newest mapping in this process, shared by every
    /// realm of the file here: a file that grows past its mapping gets a new one, and the
    /// counts start again (`peakResidentBytes`, `decryptedUnits`, `installedFromWrites`).
    public struct EncryptedCacheStatistics: Sendable, Equatable {
        /// Whether pages are decrypted on demand within the budget. False where the system
        /// refuses userfaultfd: the whole file is then decrypted into memory at open and
        /// `fallbackReason` says why.
        public let decryptsOnDemand: Bool
        /// Why the whole file is decrypted into memory, when it is.
        public let fallbackReason: String?
        /// The most decrypted bytes kept in memory: `encryptedCacheSize`, in whole 16 KiB
        /// units, and at least four of them.
        public let budgetBytes: Int
        /// Decrypted bytes in memory now, and the most there have been at once.
        public let residentBytes: Int
        public let peakResidentBytes: Int
        /// 16 KiB units read from the disk and decrypted: the first touch of each, and every
        /// touch of one dropped to keep to the budget. Growing with every query of the same
        /// data means the budget is smaller than the working set.
        public let decryptedUnits: Int
        /// Units a commit wrote whole and put into memory from its own bytes (not decrypted).
        public let installedFromWrites: Int
        /// Units that did not verify when decrypted: reads of them throw `fileCorrupted`.
        public let damagedUnits: Int
    }

    /// The statistics of an encrypted realm's decrypted pages; nil for a realm without an
    /// `encryptionKey` (and for in-memory realms, which are never encrypted on a disk).
    public var encryptedCacheStatistics: EncryptedCacheStatistics? {
        store.decryptedPages.map(EncryptedCacheStatistics.init)
    }
}

extension Realm.EncryptedCacheStatistics {
    init(_ counts: FaultRegionCounts) {
        let unit = EncryptedFile.unitSize
        self.init(decryptsOnDemand: counts.onDemand, fallbackReason: counts.fallbackReason, budgetBytes: counts.budget * unit,
                  residentBytes: counts.resident * unit, peakResidentBytes: counts.peakResident * unit,
                  decryptedUnits: counts.installs, installedFromWrites: counts.installedFromWrites, damagedUnits: counts.damaged)
    }
}
