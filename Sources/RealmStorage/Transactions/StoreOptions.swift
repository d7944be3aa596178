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
    package var limits: TreeLimits = .standard
    /// Wraps the opened file: tests put fault- and crash-injecting layers here.
    package var fileWrapper: (@Sendable (StorageFile) -> StorageFile)?

    package init(durability: Durability = .full, create: Bool = true, readOnly: Bool = false,
                 limits: TreeLimits = .standard, fileWrapper: (@Sendable (StorageFile) -> StorageFile)? = nil) {
        self.durability = durability
        self.create = create
        self.readOnly = readOnly
        self.limits = limits
        self.fileWrapper = fileWrapper
    }
}
