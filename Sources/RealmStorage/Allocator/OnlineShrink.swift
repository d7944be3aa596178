// Online shrinking: giving a file's unused tail back while it stays open (issue 25, point 4).
//
// A burst of writes that is deleted again leaves the file large and mostly free. `compact()`
// needs every handle closed; a server never closes them. So ordinary commits move the live
// nodes out of the end of the file, a little each, and the file is cut once its tail is free.
//
//   1. When. The sync that makes a version durable notes its size and free bytes (it sums the
//      free list anyway, GroupCommit.swift); the next writer starts shrinking when the version
//      spans at least 1 MiB and its free space exceeds twice its live data (realm-core 13's
//      rule). The check on the commit path is a comparison of two numbers; nothing below runs
//      while the file is not shrinking.
//   2. The limit. Shrinking aims at a limit a quarter above the live data (and a little more):
//      the room below it holds the nodes moved down and the commits meanwhile. The allocator
//      keeps every allocation below the limit when free space there holds it (FreeSpace,
//      `shrinkLimit`), and goes past it only when none does.
//   3. Moving. Each commit walks the trees from where the last one stopped (`ShrinkState`),
//      table by table, the cluster tree and then each index, in key order, and makes every
//      node past the limit a buffer, with its parents (BTree+Evacuate.swift), within a budget
//      of leaves looked at and bytes moved, and no more bytes than half the room free for good
//      below the limit (none while a reader pins what lies there: moving nodes that cannot go
//      below the limit would only churn). The commit writes them below the limit. Contents
//      never change: change sets and notifications see nothing. The other nodes a version
//      reaches move too: the schema blob and change sets past the limit are written again, a
//      free list chain with a node past it is replaced by a full list (Store+Commit.swift), and
//      the top node, commit record and run header are new in every commit anyway.
//   4. Freeing. A moved node's old place is released like any replaced node: tagged with the
//      versions that reach it, reusable once no pinned version in any process does
//      (FreeSpace.swift). Free space at the end of the file then lowers the version's logical
//      size (`releaseUnreachable`): that version and every later one end below it.
//   5. Cutting (Store+Shrink.swift). A commit about to write finds the file longer than what
//      it needs by more than a quarter and cuts it to what it needs: its own logical size and
//      reserved run header, and the logical sizes of the durable version and of every version
//      written since (recovery refuses a root whose size exceeds the file, so the cut a smaller
//      size allows comes only once the commit with that size is durable). Every node past
//      that is unreachable from every version anyone may still read or recover: the allocator
//      may overwrite it already, which is a stronger claim. Only a reader's touch of a page
//      past the end (SIGBUS) is new, so the walks that read roots of versions nobody pins (the
//      run header chains, Recovery.swift) read with pread, and a process still opening the
//      file (its floor pins every version, ProcessCoordination.swift) defers the cut.
//   6. Done. Shrinking ends when the version's logical size is below the limit, or when the
//      live data grew back to the limit (there is nothing to gain).
//
// Other processes' mappings: a mapping reserves address space beyond the file (Recovery
// .reservation) and is never touched past what a pinned version reaches, so a file that got
// shorter under it is harmless; a file that grows again is written before it is read. A writer
// taking the write lock over reads the file's size again (Store+Process.swift), and growth
// reads it too, so no process goes on believing the file longer than it is.

/// What an online shrink is doing: the limit and where the walk of the trees resumes. The
/// write lane's holder's, like the allocator.
struct ShrinkState {
    /// Nodes past this offset are moved below it.
    var limit: UInt64
    /// The table being walked, by position in the catalogue.
    var table = 0
    /// The tree of that table: -1 its cluster tree, else the index of that column.
    var tree = -1
    /// Where the walk of the tree resumes (nil: at its first leaf).
    var clusterKey: Int64?
    var indexKey: IndexFormat.Key?
    /// Passes over every table completed.
    var passes = 0

    init(limit: UInt64) { self.limit = limit }

    /// Bytes of the live data from which shrinking starts, and the least file.
    static let minimumFileSize: UInt64 = 1 << 20

    /// The limit to shrink a version of `logicalSize` bytes, `freeBytes` of them free, to;
    /// nil when it should not shrink (point 1).
    static func limit(logicalSize: UInt64, freeBytes: UInt64) -> UInt64? {
        guard logicalSize >= minimumFileSize, freeBytes <= logicalSize else { return nil }
        let used = logicalSize - freeBytes
        guard freeBytes > 2 * used else { return nil }
        return limit(forUsed: used)
    }

    /// A quarter above the live data and 64 KiB more, in whole pages (point 2).
    static func limit(forUsed used: UInt64) -> UInt64 {
        (used + used / 4 + (64 << 10) + 4095) & ~4095
    }

    /// Leaves a commit looks at, and bytes it moves, at most (point 3): a few per commit, so
    /// that shrinking costs an ordinary commit a few tens of kilobytes of writes.
    static let visitsPerCommit = 256
    static let bytesPerCommit = 64 << 10
    /// Room below the limit under which a commit moves nothing (point 3).
    static let minimumMove = 8 << 10
}
