// Starting, steering and ending an online shrink, and cutting the file's free tail
// (Allocator/OnlineShrink.swift has the design; its points are cited by number).

extension Store {
    /// What online shrinking did since this store opened.
    package struct ShrinkCounts: Sendable, Equatable {
        /// Shrinks started (point 1).
        package var started = 0
        /// Shrinks that reached their limit (point 6).
        package var finished = 0
        /// Bytes of nodes the trees' walks moved below the limit (point 3).
        package var movedBytes = 0
        /// Times the file was cut (point 5).
        package var truncations = 0
        /// Whether a shrink is under way, and its limit.
        package var limit: UInt64?
        /// Times a shrink began to wait, for room below its limit or after a pass that moved
        /// nothing (OnlineShrink.swift, point 7).
        package var waits = 0
    }

    /// Online shrinking's counts since this store opened.
    package var shrinkCounts: ShrinkCounts { stateLock.withLock { $0.shrinkStats } }

    /// For the write lane's new holder: starts, steers or ends the shrink from the size and
    /// free bytes of the newest durable version (noted by its sync, `spaceOfDurable`). Two
    /// comparisons while the file does not shrink.
    func steerShrink(logicalSize: UInt64, freeBytes: UInt64) {
        guard var state = shrink else {
            guard let limit = ShrinkState.limit(logicalSize: logicalSize, freeBytes: freeBytes) else { return }
            shrink = ShrinkState(limit: limit)
            stateLock.withLock {
                $0.shrinkStats.started += 1
                $0.shrinkStats.limit = limit
            }
            return
        }
        let used = logicalSize - min(freeBytes, logicalSize)
        if logicalSize <= state.limit || used + used / 8 >= state.limit {
            // Below the limit: done. Or the live data grew back to it: shrinking to it would
            // not hold the data, and the file is no longer mostly free (point 6).
            shrink = nil
            stateLock.withLock {
                if logicalSize <= state.limit { $0.shrinkStats.finished += 1 }
                $0.shrinkStats.limit = nil
            }
            return
        }
        let limit = state.limit
        state.tick { free.reusableBytes(below: limit) }
        if state.waits != state.reportedWaits {
            let begun = state.waits - state.reportedWaits
            state.reportedWaits = state.waits
            stateLock.withLock { $0.shrinkStats.waits += begun }
        }
        shrink = state
    }

    func noteShrinkMoved(_ bytes: Int) {
        stateLock.withLock { $0.shrinkStats.movedBytes += bytes }
    }

    /// Cuts the file's free tail before a commit is written, with the lane (and the process
    /// write lock) held (point 5): when the file is at least 1 MiB and longer by more than a
    /// quarter than what the versions reach. Two comparisons otherwise.
    ///
    /// What the versions reach: the commit's logical size, which bounds every node of every
    /// version written before it that anyone may read or recover (the allocator would
    /// overwrite the rest), the place its successor's run header is reserved at, and the
    /// logical sizes recovery checks (below).
    func cutFreeTail(before commit: RootSlot) throws(StorageError) {
        guard physicalSize >= ShrinkState.minimumFileSize else { return }
        let needed = max(commit.logicalSize, commit.nextRun == 0 ? 0 : commit.nextRun + UInt64(RunHeader.footprint(sealing)))
        guard needed < physicalSize - physicalSize / 4 else { return }
        // Recovery refuses a root whose logical size exceeds the file, whatever it reaches: the
        // durable version, and each written since (one of which a crash may leave the newest
        // that verifies), must keep theirs inside the file. So the cut that a commit's smaller
        // size allows waits until that commit is durable.
        let recoverable = stateLock.withLock { state in
            state.group.unsynced.reduce(state.committed.slot.logicalSize) { max($0, $1.state.slot.logicalSize) }
        }
        let target = max(needed, recoverable)
        guard target < physicalSize - physicalSize / 4 else { return }
        // A process still opening the file pins every version from 1 (its floor) and may read
        // any of them in recovery: the cut waits until it has opened.
        if let coordination, coordination.othersPins().ranges.contains(where: { $0.lowerBound <= 1 }) { return }
        let size = max((target + 4095) & ~4095, UInt64(FileHeader.size))
        try file.setSize(size)
        physicalSize = size
        stateLock.withLock { $0.shrinkStats.truncations += 1 }
    }
}
