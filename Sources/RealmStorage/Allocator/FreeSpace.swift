// Free space and when it may be reused.
//
// A node written by the commit of version A and replaced by the commit of version F is
// reachable from exactly the versions A ..< F. When F commits, the node's extent joins the
// free list tagged [A, F). It may be overwritten once no version in that range can be read
// again, which is the case when no pinned version lies in [A, F):
//
//   1. Readers only ever pin the newest committed version, so a version that is not pinned
//      now will never be pinned again. Once an extent is reusable it stays reusable, and the
//      allocator clears its tag ("free for good") and merges it with free neighbours.
//   2. The newest committed version always counts as pinned: it is what the next commit
//      must leave intact, so that a crash during that commit recovers it (FileHeader.swift).
//   3. Checking the range, not just "older than the oldest reader", is what keeps a long-lived
//      reader from stopping all reuse: space written after that reader's version and freed
//      before the newest is reused while the reader still holds its version (realm-core calls
//      this back-dating; LMDB's reader table makes the same argument about its free pages).
//      It holds for readers in other processes too: the lock file publishes each version
//      they pin (ProcessCoordination.swift), and only a process pinning more distinct versions
//      than its slot holds has some summarised as a range, every version of which counts.
//   4. Tagged neighbours that the same pinned versions reach become one extent, reachable
//      from the earlier first version to the later end: the wider range holds no other pinned
//      version, and no version in it can be pinned later (invariant 1: new pins are of the
//      newest version, which the range includes only if it is pinned already), so the merged
//      extent is reusable exactly when each part would have been. A reader that holds one
//      version for long keeps its old nodes from reuse, a few extents rather than one per
//      node freed since.
//
// In the file, the free list of a version is a chain of nodes (FreeList+Chain.swift): a full
// list, then deltas, each naming the node before it. A commit writes one delta holding only
// the extents it changed, or, once the deltas have grown to half the full list, a new full
// list. Writing the whole list at every commit made a small commit's cost grow with the
// file: on a million-object file the list was 42 KiB, most of a one-object commit's bytes,
// and too large for the commit's run to fit the free space after the last one (issue 23).
// The nodes are allocated last in a commit, from space that leaves the list no longer, so the
// list they hold is exactly the free space of the new version (CommitWriter.swift).
//
// Granularity. Every offset and length here is a multiple of `alignment`: 8 for files whose
// nodes carry checksums, 16 for authenticated nodes (NodeSealing.swift, invariant S1), where
// callers allocate and release whole footprints. Since every allocation takes a multiple of it
// from a start that is one, and every release gives one back, extents, the cursor and the end
// of the file stay multiples of it. The 16-byte mode checks this (allocations and releases off
// the grid trap: callers pass footprints; a reserved run header from the file that is off it is
// refused, lists read from the file are checked: FreeList+Chain.swift); the 8-byte mode checks
// nothing, as before (its callers pass node lengths, multiples of 8 by construction).

package struct FreeExtent: Equatable, Sendable {
    package var offset: UInt64
    package var length: UInt64
    /// The extent was reachable from versions `firstVersion ..< endVersion`; both 0 once no
    /// pinned version can reach it.
    package var firstVersion: UInt64
    package var endVersion: UInt64

    package var end: UInt64 { offset + length }
    package var isFreeForGood: Bool { endVersion == 0 }
}

package struct FreeSpace: Equatable, Sendable {
    /// Sorted by offset, never overlapping.
    package private(set) var extents: [FreeExtent]
    /// The end of all allocated space: new space comes from here when no extent fits.
    package private(set) var logicalSize: UInt64
    /// What every offset and length is a multiple of: 8, or 16 for authenticated nodes (see the
    /// header). Not stored in the file (the file's sealing says it), and not part of equality.
    package let alignment: UInt64
    /// Where the last allocation ended, when that is the start of an extent free for good:
    /// the next allocation continues there if it fits (see `allocate`). Not stored in the
    /// file, and not part of equality.
    private var cursor: UInt64?
    /// Bytes allocated since `beginRun`: what the next commit expects to need. A hint, not
    /// stored in the file.
    private var runBytes: UInt64 = 0
    /// The run started at the end of the file: allocations go on there (`beginRun`).
    private var runAtEnd = false
    /// The extents free for good by length, then offset, for best fit: built when an
    /// allocation first needs one, kept up to date by `take`, dropped by every other change.
    /// A large commit places dozens of nodes out of its run: a scan of the whole list for
    /// each was a fifth of preparing it; sorting once per commit and searching costs about
    /// two thirds of that, and grows more slowly with the list (W2g: 70 nodes, 600 extents;
    /// perf).
    /// Not part of equality.
    private var bySize: [UInt128]?
    /// The nodes in the file holding this list: a full list, then the deltas on top of it,
    /// oldest first (FreeList+Chain.swift). Empty for a list never written. Not part of
    /// equality.
    package internal(set) var chain: [FreeListNode] = []
    /// Spans of the file whose extents changed since `beginDelta`, in no order: the next
    /// delta lists every extent inside them. An extent changed in any way (created, grown,
    /// shrunk, retagged, merged, removed) has its span before and after the change in here, so
    /// an extent that is not wholly inside them is one this delta leaves as it was.
    /// Not part of equality.
    var touched: [(low: UInt64, high: UInt64)] = []
    /// A release free for good may have put two extents free for good side by side: the next
    /// `releaseUnreachable` looks at every extent, not only the tagged ones. Not part of
    /// equality.
    private var needsFullPass = true
    /// While the file shrinks online (OnlineShrink.swift): allocations stay below this offset
    /// whenever free space there holds them, and go past it only when none does. Nil otherwise,
    /// and then every path below costs one comparison with nil. Not stored in the file, and not
    /// part of equality.
    package var shrinkLimit: UInt64? {
        // `bySize` holds what fits below the limit while there is one (`sizeKey(of:)`).
        didSet { if shrinkLimit != oldValue { bySize = nil } }
    }
    #if DEBUG
    /// The list at `beginDelta`: debug builds check that the delta turns it into this one.
    var deltaBase: [FreeExtent]?
    #endif

    package static func == (a: FreeSpace, b: FreeSpace) -> Bool {
        a.extents == b.extents && a.logicalSize == b.logicalSize
    }

    /// - Parameter alignment: 8, or 16 for authenticated nodes; `logicalSize` and `extents` are
    ///   multiples of it.
    package init(extents: [FreeExtent], logicalSize: UInt64, alignment: UInt64 = UInt64(NodeLayout.alignment)) {
        precondition(alignment == 8 || alignment == 16, "free space is 8- or 16-byte granular")
        precondition(alignment == 8 || (logicalSize % alignment == 0 && extents.allSatisfy { ($0.offset | $0.length) % alignment == 0 }),
                     "free space that is not a multiple of its granularity")
        self.extents = extents
        self.logicalSize = logicalSize
        self.alignment = alignment
    }

    package var freeBytes: UInt64 { extents.reduce(0) { $0 + $1.length } }

    /// Bytes free for good below `limit`: the room an online shrink has to move nodes into.
    func reusableBytes(below limit: UInt64) -> UInt64 {
        var total: UInt64 = 0
        for extent in extents {
            guard extent.offset < limit else { break }
            if extent.isFreeForGood { total += min(extent.end, limit) - extent.offset }
        }
        return total
    }

    /// Starts recording the changes the next delta holds (a commit's first step).
    package mutating func beginDelta() {
        touched.removeAll(keepingCapacity: true)
        #if DEBUG
        deltaBase = extents
        #endif
    }

    /// Records that the extents in `low ..< high` changed.
    @inline(__always)
    private mutating func touch(_ low: UInt64, _ high: UInt64) {
        touched.append((low, high))
    }

    /// Adds space no longer reachable from the version being written.
    ///
    /// Next to an extent freed by the same version it becomes one extent, reachable from the
    /// earlier of the two first versions: a wider range only keeps the space from reuse longer,
    /// never shorter, and a commit frees the nodes an earlier commit wrote together (its run)
    /// together, so the list stays a few entries per commit instead of one per node.
    package mutating func release(offset: UInt64, length: UInt64, firstVersion: UInt64, endVersion: UInt64) {
        precondition(alignment == 8 || (offset | length) % alignment == 0, "released space is not a multiple of the allocator's granularity (a node's footprint)")
        // Tagged space never merges with space free for good: only the latter changes `bySize`.
        if endVersion == 0 {
            bySize = nil
            needsFullPass = true
        }
        var low = 0, high = extents.count
        while low < high {
            let mid = (low + high) >> 1
            if extents[mid].offset < offset { low = mid + 1 } else { high = mid }
        }
        if low > 0, extents[low - 1].end == offset, extents[low - 1].endVersion == endVersion, endVersion != 0 {
            touch(extents[low - 1].offset, offset + length)
            extents[low - 1].length += length
            extents[low - 1].firstVersion = min(extents[low - 1].firstVersion, firstVersion)
            if low < extents.count, extents[low].offset == offset + length, extents[low].endVersion == endVersion {
                touch(extents[low].offset, extents[low].end)
                extents[low - 1].length += extents[low].length
                extents[low - 1].firstVersion = min(extents[low - 1].firstVersion, extents[low].firstVersion)
                extents.remove(at: low)
            }
            return
        }
        if low < extents.count, extents[low].offset == offset + length, extents[low].endVersion == endVersion, endVersion != 0 {
            touch(offset, extents[low].end)
            extents[low].offset = offset
            extents[low].length += length
            extents[low].firstVersion = min(extents[low].firstVersion, firstVersion)
            return
        }
        touch(offset, offset + length)
        extents.insert(FreeExtent(offset: offset, length: length, firstVersion: firstVersion, endVersion: endVersion), at: low)
    }

    /// Clears the tags of extents no pinned version can reach (invariant 1), merges tagged
    /// neighbours the same pinned versions reach (invariant 4) and neighbours that are free for
    /// good. `pinned` must be sorted; every version in each of `ranges` counts as pinned too
    /// (summaries of other processes' pins, ProcessCoordination.swift).
    package mutating func releaseUnreachable(pinned: [UInt64], ranges: [ClosedRange<UInt64>] = []) {
        // A new commit's allocations start afresh (`beginRun`), not where the last one ended.
        cursor = nil
        runAtEnd = false
        bySize = nil
        // Only tagged extents change here, and only they and their neighbours can merge: two
        // neighbours free for good are merged by the pass that made the second one so, and
        // nothing else puts them side by side except a release free for good, which asks for a
        // pass over the whole list (`needsFullPass`). A pass over every extent per commit was
        // most of this on a file whose bulk load left 1,300 fragments, almost none of which
        // change from one commit to the next (W2 on 1,000,000 objects; perf).
        #if DEBUG
        // Debug builds check the windowed pass against a pass over every extent.
        var full: FreeSpace?
        if !needsFullPass {
            full = self
            full!.needsFullPass = true
            full!.releaseUnreachable(pinned: pinned, ranges: ranges)
        }
        defer {
            if let full { assert(full == self, "merging around the tagged extents is not what a pass over the whole free list gives") }
        }
        #endif
        var windows: [Range<Int>] = []
        extents.withUnsafeBufferPointer { extents in
            if needsFullPass {
                windows = extents.isEmpty ? [] : [0..<extents.count]
                return
            }
            for i in 0..<extents.count where extents[i].endVersion != 0 {
                let window = max(i - 1, 0)..<min(i + 2, extents.count)
                if let last = windows.last, last.upperBound >= window.lowerBound {
                    windows[windows.count - 1] = last.lowerBound..<window.upperBound
                } else {
                    windows.append(window)
                }
            }
        }
        needsFullPass = false
        if !windows.isEmpty { merge(in: windows, pinned: pinned, ranges: ranges) }
        // Free space at the very end gives the file back its tail.
        while let last = extents.last, last.isFreeForGood, last.end == logicalSize {
            touch(last.offset, last.end)
            logicalSize = last.offset
            extents.removeLast()
        }
    }

    /// `releaseUnreachable`'s work on the extents of `windows` (sorted, apart): the extents
    /// between them are free for good and merge with nothing, and are only moved down over
    /// the extents merged away. In place: the output never gets ahead of the input.
    private mutating func merge(in windows: [Range<Int>], pinned: [UInt64], ranges: [ClosedRange<UInt64>]) {
        // Taken out while the list is borrowed, so that recording a change allocates nothing.
        var changes: [(low: UInt64, high: UInt64)] = []
        swap(&changes, &touched)
        var kept = windows[0].lowerBound
        extents.withUnsafeMutableBufferPointer { extents in
            func move(_ range: Range<Int>) {
                if kept != range.lowerBound, !range.isEmpty {
                    (extents.baseAddress! + kept).update(from: extents.baseAddress! + range.lowerBound, count: range.count)
                }
                kept += range.count
            }
            var next = windows[0].lowerBound
            for window in windows {
                move(next..<window.lowerBound)
                next = window.upperBound
                // The pinned versions the last kept extent holds, as positions in `pinned` (nil:
                // free for good, or reached by a range, which is left as it is). The extent
                // before a window is free for good.
                var lastReach: Range<Int>?
                for i in window {
                    var extent = extents[i]
                    var reach: Range<Int>?
                    if !extent.isFreeForGood {
                        let inRange = ranges.contains { $0.lowerBound < extent.endVersion && $0.upperBound >= extent.firstVersion }
                        let held = Self.pinnedRange(pinned, from: extent.firstVersion, to: extent.endVersion)
                        if !inRange && held.isEmpty {
                            extent.firstVersion = 0
                            extent.endVersion = 0
                            changes.append((extent.offset, extent.end))
                        } else if !inRange {
                            reach = held
                        }
                    }
                    if kept > 0, extents[kept - 1].end == extent.offset,
                       (extents[kept - 1].isFreeForGood && extent.isFreeForGood) || (reach != nil && reach == lastReach) {
                        let last = extents[kept - 1]
                        changes.append((last.offset, extent.end))
                        extents[kept - 1].length += extent.length
                        extents[kept - 1].firstVersion = min(last.firstVersion, extent.firstVersion)
                        extents[kept - 1].endVersion = max(last.endVersion, extent.endVersion)
                    } else {
                        extents[kept] = extent
                        kept += 1
                        lastReach = reach
                    }
                }
            }
            move(next..<extents.count)
        }
        extents.removeLast(extents.count - kept)
        swap(&changes, &touched)
    }

    /// The positions in `pinned` (sorted) of the versions in first ..< end.
    static func pinnedRange(_ pinned: [UInt64], from first: UInt64, to end: UInt64) -> Range<Int> {
        func lowerBound(_ value: UInt64) -> Int {
            var low = 0, high = pinned.count
            while low < high {
                let mid = (low + high) >> 1
                if pinned[mid] < value { low = mid + 1 } else { high = mid }
            }
            return low
        }
        let low = lowerBound(first)
        return low..<max(low, lowerBound(end))
    }

    /// Whether any pinned version lies in first ..< end.
    static func isPinned(_ pinned: [UInt64], from first: UInt64, to end: UInt64) -> Bool {
        var low = 0, high = pinned.count
        while low < high {
            let mid = (low + high) >> 1
            if pinned[mid] < first { low = mid + 1 } else { high = mid }
        }
        return low < pinned.count && pinned[low] < end
    }

    /// Starts a commit's allocations. They go one after another from the start of the
    /// smallest extent free for good that holds what the previous commit took and half as much
    /// again, so that the commit reaches the disk as one run of bytes: a sync costs about 10 µs
    /// more for every separate run it writes (measured on virtio and ext4: one run of 1 to 8
    /// pages ~86 µs, 8 scattered pages ~142 µs). When no extent holds it, a small commit's run
    /// goes at the end of the file; a large one's nodes fill the free fragments instead (best
    /// fit, node by node): its sync is mostly its bytes, and a run at the end every time grew
    /// the file (W1: 43 MiB → 66 MiB).
    package mutating func beginRun() {
        let expected = max(runBytes + runBytes / 2, 4096)
        runBytes = 0
        if let start = runStart(holding: expected, orEnd: false) {
            cursor = start
            runAtEnd = false
        } else {
            runAtEnd = expected <= Self.smallRun && fitsBelowLimit(logicalSize, expected)
            cursor = runAtEnd ? logicalSize : nil
        }
    }

    /// Whether `length` bytes at `offset` end at or before the shrink limit (always, when the
    /// file is not shrinking).
    @inline(__always)
    private func fitsBelowLimit(_ offset: UInt64, _ length: UInt64) -> Bool {
        guard let shrinkLimit else { return true }
        return offset + length <= shrinkLimit
    }

    /// The largest run `beginRun` puts at the end of the file when no free extent holds it.
    static let smallRun: UInt64 = 64 << 10

    /// Starts a commit's allocations with `length` bytes at `offset`, where the previous
    /// commit reserved its run header (`reserveNextRun`); the allocations after it continue
    /// from there. False, having changed nothing, when those bytes are not free (the commit
    /// then starts its run with `beginRun` and writes a root slot).
    package mutating func beginRun(at offset: UInt64, length: UInt64) -> Bool {
        // While shrinking, a run header reserved past the limit is given up: the commit writes
        // a slot instead, and its run goes below the limit.
        guard fitsBelowLimit(offset, length) else { return false }
        // A reservation from the file that is not on the grid (damage its checksum missed) is
        // given up like one that is not free.
        guard alignment == 8 || (offset | length) % alignment == 0 else { return false }
        bySize = nil
        if offset >= logicalSize {
            // The end of the file moved back since the reservation (free space at its end was
            // given back): what lies between is free again.
            if offset > logicalSize {
                release(offset: logicalSize, length: offset - logicalSize, firstVersion: 0, endVersion: 0)
            }
            logicalSize = offset + length
        } else {
            var low = 0, high = extents.count
            while low < high {
                let mid = (low + high) >> 1
                if extents[mid].end <= offset { low = mid + 1 } else { high = mid }
            }
            guard low < extents.count, extents[low].isFreeForGood, extents[low].offset <= offset,
                  offset + length <= extents[low].end else { return false }
            let extent = extents[low]
            touch(extent.offset, extent.end)
            // Edited in place where it can be: each insert or removal moves the rest of the list.
            let suffix = FreeExtent(offset: offset + length, length: extent.end - offset - length, firstVersion: 0, endVersion: 0)
            switch (extent.offset < offset, offset + length < extent.end) {
            case (false, false): extents.remove(at: low)
            case (false, true): extents[low] = suffix
            case (true, false): extents[low].length = offset - extent.offset
            case (true, true):
                extents[low].length = offset - extent.offset
                extents.insert(suffix, at: low + 1)
            }
        }
        // As in `beginRun`: a small run goes on at the end of the file, a large one's nodes
        // fill free fragments when the space after the header does not hold them.
        runAtEnd = offset + length == logicalSize && runBytes + runBytes / 2 <= Self.smallRun
        runBytes = length
        cursor = offset + length
        return true
    }

    /// Where the next commit's run should start, for a commit about to finish: right after
    /// this one when the free space there holds what this one took and half as much again (the
    /// commits then follow each other like a log), else where `beginRun` would start it (the
    /// end of the file only when no free space holds it, or the file would only grow).
    /// Nothing is allocated: the space stays free in this version, for the next one to take
    /// first (`beginRun(at:length:)`).
    package func reserveNextRun() -> UInt64 {
        let expected = max(runBytes + runBytes / 2, 4096)
        if let cursor, let i = extentIndex(at: cursor), extents[i].isFreeForGood, extents[i].length >= expected,
           fitsBelowLimit(cursor, expected) { return cursor }
        return runStart(holding: expected, orEnd: true)!
    }

    /// The start of the smallest extent free for good that holds `length` bytes, else the end
    /// of the file (when `orEnd`) or nil.
    private func runStart(holding length: UInt64, orEnd: Bool) -> UInt64? {
        var best = -1
        for i in extents.indices where extents[i].isFreeForGood && extents[i].length >= length && fitsBelowLimit(extents[i].offset, length) {
            if best < 0 || extents[i].length < extents[best].length { best = i }
        }
        return best >= 0 ? extents[best].offset : (orEnd ? logicalSize : nil)
    }

    /// Takes `length` bytes (a multiple of `alignment`: a node's footprint): right after the
    /// previous allocation when the extent there (or the end of the file) holds it, so that a
    /// commit's nodes, free list and record lie together and go out in one write; else the best
    /// fit among the extents free for good, else the end of the file.
    package mutating func allocate(_ length: UInt64) -> UInt64 {
        precondition(alignment == 8 || length % alignment == 0, "an allocation that is not a multiple of the allocator's granularity (a node's footprint)")
        let offset = take(length)
        cursor = offset + length
        runBytes += length
        return offset
    }

    private mutating func take(_ length: UInt64) -> UInt64 {
        if let cursor, fitsBelowLimit(cursor, length) {
            if let i = extentIndex(at: cursor), extents[i].isFreeForGood, extents[i].length >= length {
                takeFront(of: i, length)
                return cursor
            }
            if runAtEnd && cursor == logicalSize {
                logicalSize += length
                return cursor
            }
        }
        // Best fit: the shortest extent that holds it, the first in the file among equals;
        // while shrinking, the shortest that holds it below the limit (`bySize` then holds only
        // what lies below it, `sizeKey(of:)`).
        if bySize == nil {
            var sizes: [UInt128] = []
            sizes.reserveCapacity(extents.count)
            for extent in extents where extent.isFreeForGood {
                if let key = sizeKey(of: extent) { sizes.append(key) }
            }
            sizes.sort()
            bySize = sizes
        }
        let fit = Self.lowerBound(bySize!, Self.sizeKey(length, 0))
        if fit < bySize!.count, let i = extentIndex(at: UInt64(truncatingIfNeeded: bySize![fit])) {
            let offset = extents[i].offset
            takeFront(of: i, length)
            return offset
        }
        if let shrinkLimit, logicalSize + length > shrinkLimit, let i = bestFitAnywhere(length) {
            // Nothing below the limit holds it, nor the end of the file: past the limit, rather
            // than growing a file that is shrinking.
            let offset = extents[i].offset
            takeFront(of: i, length)
            return offset
        }
        let offset = logicalSize
        logicalSize += length
        return offset
    }

    /// The shortest extent free for good that holds `length`, anywhere in the file: a scan,
    /// for the rare allocation that fits nowhere below a shrink limit.
    private func bestFitAnywhere(_ length: UInt64) -> Int? {
        var best: Int?
        for i in extents.indices where extents[i].isFreeForGood && extents[i].length >= length {
            if best == nil || extents[i].length < extents[best!].length { best = i }
        }
        return best
    }

    /// Takes `length` bytes from the start of extent `i` (free for good), in both lists.
    private mutating func takeFront(of i: Int, _ length: UInt64) {
        let extent = extents[i]
        touch(extent.offset, extent.end)
        if bySize != nil {
            if let key = sizeKey(of: extent) { bySize!.remove(at: Self.lowerBound(bySize!, key)) }
            if extent.length > length,
               let rest = sizeKey(of: FreeExtent(offset: extent.offset + length, length: extent.length - length, firstVersion: 0, endVersion: 0)) {
                bySize!.insert(rest, at: Self.lowerBound(bySize!, rest))
            }
        }
        if extent.length == length {
            extents.remove(at: i)
        } else {
            extents[i].offset += length
            extents[i].length -= length
        }
    }

    /// An extent's place in `bySize`: by length, then offset.
    private static func sizeKey(_ length: UInt64, _ offset: UInt64) -> UInt128 { UInt128(length) << 64 | UInt128(offset) }

    /// An extent's place in `bySize`, or nil when it has none: while shrinking, only what lies
    /// below the limit counts, so that the best fit there is a binary search (a scan past the
    /// extents beyond the limit cost every allocation of every commit while the file shrank).
    private func sizeKey(of extent: FreeExtent) -> UInt128? {
        guard let shrinkLimit else { return Self.sizeKey(extent.length, extent.offset) }
        guard extent.offset < shrinkLimit else { return nil }
        return Self.sizeKey(min(extent.length, shrinkLimit - extent.offset), extent.offset)
    }

    /// The first position in `sorted` whose entry is not less than `entry`.
    private static func lowerBound(_ sorted: [UInt128], _ entry: UInt128) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) >> 1
            if sorted[mid] < entry { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The extent that starts at `offset`, if any.
    private func extentIndex(at offset: UInt64) -> Int? {
        var low = 0, high = extents.count
        while low < high {
            let mid = (low + high) >> 1
            if extents[mid].offset < offset { low = mid + 1 } else { high = mid }
        }
        return low < extents.count && extents[low].offset == offset ? low : nil
    }

    // MARK: The full list node (its layout: FreeList+Chain.swift)

    package static func nodeSize(entries: Int) -> Int { 24 + entries * 32 }

    /// The full list node, padded to `size` bytes (reserved before the list was final).
    package func encoded(version: VersionID, size: Int) -> [UInt8] {
        var w = NodeWriter(capacity: size)
        w.u32(UInt32(extents.count))
        w.u32(0)
        Self.store(extents[...], into: &w)
        precondition(w.count <= size, "free list grew after its node was reserved")
        w.zeros(size - w.count)
        return w.finish(kind: .freeList, version: version)
    }

    /// Stores `extents` as 32-byte entries (four fields each) into one reservation: a call per
    /// field was most of encoding a list.
    static func store(_ extents: ArraySlice<FreeExtent>, into w: inout NodeWriter) {
        extents.withUnsafeBufferPointer { extents in
            w.reserve(extents.count * 32) { out in
                for (i, e) in extents.enumerated() {
                    let at = out + i * 32
                    at.storeBytes(of: e.offset.littleEndian, as: UInt64.self)
                    at.storeBytes(of: e.length.littleEndian, toByteOffset: 8, as: UInt64.self)
                    at.storeBytes(of: e.firstVersion.littleEndian, toByteOffset: 16, as: UInt64.self)
                    at.storeBytes(of: e.endVersion.littleEndian, toByteOffset: 24, as: UInt64.self)
                }
            }
        }
    }
}
