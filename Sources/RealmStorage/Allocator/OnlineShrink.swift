// Online shrinking: giving a file's unused tail back while it stays open (issue 25, point 4).
//
// A burst of writes that is deleted again leaves the file large and mostly free. `compact()`
// needs every handle closed; a server never closes them. So ordinary commits move the live
// nodes out of the end of the file, a little each, and the file is cut once its tail is free.
//
//   1. When. The sync that makes a version durable notes its size and free bytes (it sums the
//      free list anyway, Store+GroupCommit.swift); the next writer starts shrinking when the version
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
//   7. Waiting. A shrink that cannot progress costs the commits nothing: with no room below the
//      limit (a reader pins what lies there, or commits filled it) it stops moving nodes and
//      lets the allocator, the free list and the change history go where they would without
//      it, looking again after 4 commits, then 8, up to 64; after a whole pass over the trees that moved nothing
//      (what is left past the limit is only reachable from pinned versions, and goes when they
//      do) it stops walking, and walks again after 256 commits, then 512, up to 4,096. Without
//      the wait, a bulk-loaded file read by a realm that never refreshed shrank for ever: every
//      commit walked, scanned the free list for room below the limit, and wrote its whole free
//      list (a node of the chain lay past the limit, and the new one could not go below it),
//      at half the commit rate (BENCHMARKS.md, issue 25).
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
    /// Bytes moved since the current pass began.
    var movedThisPass = 0
    /// Commits since the shrink started: the clock of `waiting`.
    var commits = 0
    /// Why the shrink waits, and until which commit (point 7); nil while it moves nodes.
    var waiting: Wait?
    /// The last commit replaced a free list chain that reached past the limit by a full list
    /// (point 3): if the chain still does, that list found no room below the limit either.
    var replacedFreeList = false

    enum Wait: Equatable {
        /// No room below the limit: nothing moves, and the limit binds nothing else either;
        /// the room is looked at again after `backoff` commits.
        case noRoom(until: Int, backoff: Int)
        /// A whole pass moved nothing: no walk until then; `backoff` commits the next time.
        case nothingToMove(until: Int, backoff: Int)
    }

    init(limit: UInt64) { self.limit = limit }

    /// The limit the allocator, the free list and the change history keep below, unless the
    /// shrink waits for room (point 7).
    var bindingLimit: UInt64? {
        if case .noRoom = waiting { return nil }
        return limit
    }

    /// Whether this commit walks the trees (point 3): not while waiting.
    var walks: Bool { waiting == nil }

    /// Counts a commit in; ends a wait whose time is up. `room` is asked only then.
    mutating func tick(room: () -> UInt64) {
        commits += 1
        switch waiting {
        case .noRoom(let until, let backoff) where commits >= until:
            let next = min(backoff * 2, Self.longestRoomCheck)
            waiting = room() / 2 >= UInt64(Self.minimumMove) ? nil : .noRoom(until: commits + next, backoff: next)
        case .nothingToMove(let until, _) where commits >= until:
            waiting = nil
        default:
            break
        }
    }

    /// Waits begun (point 7), and how many of them `Store.ShrinkCounts` has.
    var waits = 0
    var reportedWaits = 0

    /// After a walk found no room below the limit.
    mutating func waitForRoom() {
        waiting = .noRoom(until: commits + Self.shortestRoomCheck, backoff: Self.shortestRoomCheck)
        waits += 1
    }

    /// After a walk completed a pass over every table.
    mutating func passCompleted() {
        passes += 1
        if movedThisPass == 0 {
            let backoff: Int
            if case .nothingToMove(_, let last)? = lastIdle { backoff = min(last * 2, Self.longestIdle) } else { backoff = Self.shortestIdle }
            waiting = .nothingToMove(until: commits + backoff, backoff: backoff)
            lastIdle = waiting
            waits += 1
        } else {
            lastIdle = nil
        }
        movedThisPass = 0
    }

    /// The last idle wait, for its backoff: kept while passes keep moving nothing.
    private var lastIdle: Wait?

    /// Commits between looks for room (point 7): 4 at first (space a commit freed is free for
    /// good a commit or two later), doubling to 64 while there is none.
    static let shortestRoomCheck = 4
    static let longestRoomCheck = 64
    /// Commits without a walk after a pass that moved nothing: the first time, and at most.
    static let shortestIdle = 256
    static let longestIdle = 4_096

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
