#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CStorageSupport
import Synchronization

// A region of memory filled on demand: how a file whose bytes on the disk are not the bytes the
// engine reads (an LZ4-compressed copy, an encrypted file) is read in place.
//
// The engine reads nodes through raw pointers into one mapping of the file (NodeView, the
// trees, the layers above keep pointers derived from node bases). So such a file is read
// through a mapping too: an anonymous region the size of the mapping, registered with Linux's
// userfaultfd. A thread that touches a unit (some whole pages) that is not resident stops in
// the kernel; one handler thread per region asks the region's source to fill that unit
// (`FaultSource`: a compressed block verified and decompressed, an encrypted file's pages read
// and decrypted) and installs it whole (UFFDIO_COPY), which wakes the thread. Every pointer stays
// valid: the address of every byte is fixed for the region's life, and a byte a reader may read
// reads the same every time (the source's own invariant: a compressed copy is never written; a
// realm file's copy-on-write never rewrites bytes a pinned version reaches).
//
// The memory is bounded: the handler keeps at most `budget` units resident and drops one
// (MADV_DONTNEED) when it installs another over the budget. A later touch of a dropped unit
// faults again and gets the same bytes. Which one it drops: the handler never sees a hit, only
// faults, so it learns what is hot from units that fault again soon after they were dropped
// (a 2Q cache): a unit faulting for the first time goes to a probation list (a quarter of
// the budget), a unit dropped recently (within the last `budget` drops) goes to the protected
// list, and the oldest unit of probation is dropped first while probation is over its share.
// A random lookup touches the tree's upper nodes each time and a leaf once: the upper nodes
// come back soon after they are dropped, go to the protected list and stay, where dropping the
// oldest install (FIFO) dropped them every `budget` faults, so that every lookup faulted all
// the way down (W7 lookups: issue 25).
//
// A writable region (an encrypted file) also follows the file's writes: the file writes the
// disk first, then the bytes into the units of the region that are resident
// (`writeThrough`), and, in the newest mapping, installs the units the write covers whole from
// the bytes at hand (a commit's nodes are read back by the next transaction: reading and
// decrypting them again from the disk cost a fault each); when another process has written
// the file, or the file was cut or grown, it drops the units that may be behind the disk
// (`forget`); the next touch fills them from the disk again.
//
// Invariants:
//   1. The handler never touches the region's pages itself (it would wait on itself): the
//      source fills the handler's own buffer and the kernel copies it in.
//   2. Which units are resident, and their bytes, change only under the region's lock
//      (`Residency`): the handler takes it to install and drop, `writeThrough` and `forget` to
//      write and drop. Its bookkeeping is exact: a unit is resident whole, or none of its pages
//      is. So under the lock a writer touches only resident pages and never faults, and the
//      handler, which takes the lock while threads wait on it, never waits for a thread that
//      waits on it. Whoever holds the lock allocates nothing and takes no other lock.
//   3. A unit filled from the disk is filled under the lock, after every change of the disk a
//      `writeThrough` or `forget` follows has been made: an install that read the disk before
//      such a change is installed before the writer takes the lock, so the writer sees it
//      resident and writes it (or drops it). No unit is left behind the disk. A unit installed
//      from a write holds that write's bytes whole, which the disk holds already.
//   4. The budget is at least four units: one instruction touches at most two pages (an
//      unaligned load across a unit boundary), and dropping one of those to install the
//      other would make it fault for ever.
//   5. The region is unmapped only when the mapping goes, that is when no reader can touch it;
//      the handler is stopped (through a pipe it polls) and joined first. The mappings hold a
//      `FaultRegionHandle`, whose end stops and joins the handler; the handler thread holds
//      the region itself for as long as it runs, and the region goes (and is unmapped) when
//      the joined thread lets it go. (The region once joined the thread from its own deinit,
//      which never came, the thread holding it: every open of a compressed copy left a thread,
//      a region and a userfaultfd behind.)
//
// userfaultfd is asked for with UFFD_USER_MODE_ONLY first (kernel 5.11 on), which unprivileged
// processes may use where vm.unprivileged_userfaultfd is 0; without it (older kernels), as
// before, which needs that setting or privilege. Where neither is allowed (a seccomp filter, a
// kernel without userfaultfd), the caller fills a whole image at open instead, whatever the
// budget (`CompressedReading.inflate`, `EncryptedReading.whole`, which tests force). With
// user-mode-only faults, a system call given a pointer into a page not resident fails (EFAULT)
// rather than faulting: the engine only reads the region from its own code, never through a
// system call (writes go through the file's own buffers).

/// What fills the units of a region: a compressed copy's blocks, an encrypted file's pages.
package protocol FaultSource: AnyObject, Sendable {
    /// Bytes per unit: a whole number of the system's pages.
    var unitSize: Int { get }
    /// Puts unit `index`'s bytes (`unitSize` of them) into `buffer`. Returns false, having put
    /// zeros where it could not read or verify, when the unit is damaged (zeros never pass for
    /// a node: NodeFormat.swift). Called by the handler alone, one call at a time, under the
    /// region's lock: it allocates nothing and takes no lock a thread touching the region holds.
    func fill(_ index: Int, into buffer: UnsafeMutableRawPointer) -> Bool
}

/// What a region has done, for tests and tools.
package struct FaultRegionCounts: Sendable, Equatable {
    /// Whether units are filled on demand (false: the image was filled whole at open).
    package var onDemand: Bool
    /// Why the image was filled whole, when it was (userfaultfd refused, or asked for).
    package var fallbackReason: String? = nil
    /// Units resident now, and the most ever resident at once.
    package var resident: Int
    package var peakResident: Int
    /// The most units the region keeps resident.
    package var budget: Int
    /// Units installed (filled), and of them those that did not verify (zeros).
    package var installs: Int
    package var damaged: Int
    /// Units installed from a write's bytes (`writeThrough`), not filled from the disk.
    package var installedFromWrites: Int = 0
}

/// A region as its mappings hold it: when the last goes, the handler is stopped and joined, and
/// the region goes with the thread (invariant 5).
package final class FaultRegionHandle: @unchecked Sendable {
    // @unchecked: `region` is immutable; what it does across threads is its own (see above).
    package let region: FaultRegion

    fileprivate init(_ region: FaultRegion) { self.region = region }

    deinit { region.stop() }
}

/// The region and its handler (see the header).
package final class FaultRegion: @unchecked Sendable {
    // @unchecked: the buffer belongs to the handler thread alone; which units are resident is
    // in `residency`, under its lock (invariant 2); the rest is immutable after init or atomic.
    package let base: UnsafeMutableRawPointer
    package let length: Int
    let source: FaultSource
    let unitSize: Int
    let budget: Int
    private let units: Int
    private let uffd: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private var thread: pthread_t?
    private let buffer: UnsafeMutableRawPointer
    /// Where `writeThrough` puts a unit it installs: used under the lock.
    private let writeBuffer: UnsafeMutableRawPointer
    private let residency: Locked<Residency>
    let residentNow = Atomic<Int>(0), peakResident = Atomic<Int>(0), installs = Atomic<Int>(0), damaged = Atomic<Int>(0),
        installedFromWrites = Atomic<Int>(0)

    /// A region of `length` bytes (whole units) filled by `source`, with at most `cacheSize`
    /// bytes of units resident; `writable` for a source that `writeThrough` writes. Nil when
    /// userfaultfd is not available (`reason` says why).
    package static func make(length: Int, source: FaultSource, cacheSize: Int, writable: Bool) -> (region: FaultRegionHandle?, reason: String) {
        let unitSize = source.unitSize
        // Units are installed and dropped whole, in pages (16 KiB units on a 64 KiB-page kernel
        // could not be).
        guard unitSize % Int(sysconf(Int32(_SC_PAGESIZE))) == 0, length % unitSize == 0 else {
            return (nil, "units of \(unitSize) bytes are not whole pages of this system")
        }
        var fd: Int32 = -1
        var err = openrealm_uffd_open(1, &fd)
        if err == EINVAL { err = openrealm_uffd_open(0, &fd) }
        guard err == 0 else { return (nil, "userfaultfd is not available (errno \(err))") }
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        guard let base = alignedRegion(length: length, protection: protection) else {
            close(fd)
            return (nil, "no address space for the region (errno \(errno))")
        }
        err = openrealm_uffd_register(fd, base, UInt64(length))
        guard err == 0 else {
            munmap(base, length)
            close(fd)
            return (nil, "userfaultfd cannot register the region (errno \(err))")
        }
        var pipeFds: [Int32] = [0, 0]
        guard pipe(&pipeFds) == 0 else {
            munmap(base, length)
            close(fd)
            return (nil, "no pipe for the handler (errno \(errno))")
        }
        let budget = max(4, cacheSize / unitSize)
        #if os(Linux)
        // Whole 2 MiB runs of resident units may become one huge page: khugepaged collapses them
        // in the background (with userfaultfd registered, only runs with every page present), and
        // a lookup then misses the TLB as seldom as through a plain file's mapping, which the
        // page cache maps 2 MiB at a time (W3). Not asked for explicitly (MADV_COLLAPSE): that
        // costs 3-6 ms of the caller's time per 2 MiB on the benchmark machine, more than a
        // commit that fills them. Only with a budget of many huge pages: a dropped unit splits
        // its huge page, whose memory the kernel frees later. A hint: refused, nothing changes.
        if budget * unitSize >= 16 * hugePageSize { _ = madvise(base, length, MADV_HUGEPAGE) }
        #endif
        let region = FaultRegion(base: base, length: length, source: source, budget: budget, uffd: fd,
                                 stopPipe: (pipeFds[0], pipeFds[1]))
        guard region.start() else { return (nil, "no thread for the fault handler") }
        return (FaultRegionHandle(region), "")
    }

    /// An anonymous mapping of `length` bytes starting on a huge-page boundary, so that each of
    /// its whole 2 MiB runs can become a huge page.
    private static func alignedRegion(length: Int, protection: Int32) -> UnsafeMutableRawPointer? {
        let flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE
        guard let raw = mmap(nil, length + hugePageSize, protection, flags, -1, 0), raw != MAP_FAILED else { return nil }
        let start = Int(bitPattern: raw), aligned = (start + hugePageSize - 1) / hugePageSize * hugePageSize
        if aligned > start { munmap(raw, aligned - start) }
        let tail = start + length + hugePageSize - (aligned + length)
        if tail > 0 { munmap(UnsafeMutableRawPointer(bitPattern: aligned + length), tail) }
        return UnsafeMutableRawPointer(bitPattern: aligned)
    }

    /// The size of a huge page on x86_64 and on arm64 with 4 KiB pages.
    private static let hugePageSize = 2 << 20

    private init(base: UnsafeMutableRawPointer, length: Int, source: FaultSource, budget: Int, uffd: Int32, stopPipe: (read: Int32, write: Int32)) {
        self.base = base
        self.length = length
        self.source = source
        self.unitSize = source.unitSize
        self.budget = budget
        self.units = length / source.unitSize
        self.uffd = uffd
        self.stopPipe = stopPipe
        // Page-aligned: UFFDIO_COPY copies whole pages from it.
        var aligned: UnsafeMutableRawPointer?
        posix_memalign(&aligned, Int(sysconf(Int32(_SC_PAGESIZE))), unitSize)
        buffer = aligned!
        posix_memalign(&aligned, Int(sysconf(Int32(_SC_PAGESIZE))), unitSize)
        writeBuffer = aligned!
        residency = Locked(Residency(units: units, budget: budget))
    }

    /// Stops the handler and waits for its thread to end (invariant 5): for the handle, once no
    /// mapping reaches the region.
    fileprivate func stop() {
        guard let thread else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        pthread_join(thread, nil)
        self.thread = nil
    }

    deinit {
        munmap(base, length)
        close(uffd)
        close(stopPipe.read)
        close(stopPipe.write)
        free(buffer)
        free(writeBuffer)
        residency.withLock { $0.deallocate() }
    }

    /// Starts the handler thread, which holds the region until it ends (invariant 5).
    private func start() -> Bool {
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let started = pthread_create(&handle, nil, { context in
            Unmanaged<FaultRegion>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard started == 0 else {
            Unmanaged<FaultRegion>.fromOpaque(context).release()
            return false
        }
        thread = handle
        return true
    }

    /// The handler loop: install the unit of each fault until told to stop.
    private func run() {
        while true {
            var address: UInt64 = 0
            let err = openrealm_uffd_next_fault(uffd, stopPipe.read, &address)
            if err == ECANCELED { return }
            // Threads may be waiting on a fault: never leave them; try again.
            guard err == 0 else { usleep(1000); continue }
            let offset = Int(bitPattern: UInt(address)) - Int(bitPattern: base)
            guard offset >= 0, offset < length else { continue }
            residency.withLock { install(offset / unitSize, &$0) }
        }
    }

    /// Installs unit `index` unless it is resident, dropping others over the budget. Under the
    /// lock (invariants 2 and 3).
    private func install(_ index: Int, _ residency: inout Residency) {
        let start = base + index * unitSize
        let before = residency.place[index]
        if before == Place.probation || before == Place.protected {
            // A second fault in a unit installed since it was raised.
            _ = openrealm_uffd_wake(uffd, start, UInt64(unitSize))
            return
        }
        if !source.fill(index, into: buffer) { damaged.add(1, ordering: .relaxed) }
        installs.add(1, ordering: .relaxed)
        guard copyUnit(to: start, from: buffer) else {
            // The woken thread faults again, and the unit is tried again then.
            _ = openrealm_uffd_wake(uffd, start, UInt64(unitSize))
            return
        }
        residency.admit(index, droppedBefore: before == Place.dropped)
        while residency.count > budget { drop(residency.oldest(sparing: index), &residency) }
        let count = residency.count
        residentNow.store(count, ordering: .relaxed)
        if count > peakResident.load(ordering: .relaxed) { peakResident.store(count, ordering: .relaxed) }
    }

    /// Copies a unit's bytes from `source` (page-aligned) to `start`, waking the threads waiting
    /// on it; false, with none of it present, when the kernel refuses (short of memory): a unit
    /// is resident whole or not at all (invariant 2). Under the lock.
    private func copyUnit(to start: UnsafeMutableRawPointer, from source: UnsafeMutableRawPointer) -> Bool {
        var copied = openrealm_uffd_copy(uffd, start, source, UInt64(unitSize))
        if copied == EEXIST {
            // Part of the unit is present, which invariant 2 rules out: make it whole.
            madvise(start, unitSize, MADV_DONTNEED)
            copied = openrealm_uffd_copy(uffd, start, source, UInt64(unitSize))
        }
        if copied != 0 { madvise(start, unitSize, MADV_DONTNEED) }
        return copied == 0
    }

    /// Drops unit `index` (resident) and notes when. Under the lock.
    private func drop(_ index: Int, _ residency: inout Residency) {
        madvise(base + index * unitSize, unitSize, MADV_DONTNEED)
        residency.remove(index)
    }

    // MARK: Following the file's writes (a writable region)

    /// Writes `bytes`, which the file now holds at `offset`, into the units of the region that
    /// are resident; with `installing`, also installs the units the write covers whole (the
    /// newest mapping, which the next transaction reads: what a commit writes is read back
    /// soon, and installing it from the bytes at hand spares reading and decrypting it again).
    /// The others are filled from the disk when touched (invariant 3).
    package func writeThrough(_ bytes: UnsafeRawBufferPointer, at offset: Int, installing: Bool = false) {
        let end = min(offset + bytes.count, length)
        guard offset < end else { return }
        residency.withLock { residency in
            var position = offset
            while position < end {
                let index = position / unitSize
                let unitEnd = min(end, (index + 1) * unitSize)
                let source = bytes.baseAddress! + (position - offset)
                if residency.isResident(index) {
                    (base + position).copyMemory(from: source, byteCount: unitEnd - position)
                } else if installing, position == index * unitSize, unitEnd - position == unitSize {
                    // An address, not a pointer: the caller's bytes would tie the residency to the
                    // caller's region (sending), which a pointer's address does not.
                    installWritten(index, from: UInt(bitPattern: source), &residency)
                }
                position = unitEnd
            }
            residentNow.store(residency.count, ordering: .relaxed)
        }
    }

    /// Installs unit `index`, not resident, from `bytes`, its whole new contents: copied into
    /// the writers' own page-aligned buffer first (UFFDIO_COPY copies from whole pages). Under
    /// the lock; a thread waiting on the unit is woken. Not installed when the kernel refuses
    /// (short of memory): the unit stays absent and is filled from the disk when touched.
    private func installWritten(_ index: Int, from address: UInt, _ residency: inout Residency) {
        let start = base + index * unitSize
        writeBuffer.copyMemory(from: UnsafeRawPointer(bitPattern: address)!, byteCount: unitSize)
        guard copyUnit(to: start, from: writeBuffer) else { return }
        installedFromWrites.add(1, ordering: .relaxed)
        residency.admit(index, droppedBefore: residency.wasDropped(index))
        while residency.count > budget { drop(residency.oldest(sparing: index), &residency) }
        if residency.count > peakResident.load(ordering: .relaxed) { peakResident.store(residency.count, ordering: .relaxed) }
    }

    /// Drops every resident unit that holds a byte of `range`, which the disk may hold
    /// differently now (another process's writes, a cut or a growth of the file).
    package func forget(_ range: Range<Int>) {
        let range = range.clamped(to: 0..<length)
        guard !range.isEmpty else { return }
        residency.withLock { residency in
            let first = range.lowerBound / unitSize, last = (range.upperBound - 1) / unitSize
            if last - first + 1 > residency.count {
                // Fewer resident units than units in the range: walk the lists.
                for list in 0..<2 {
                    var index = residency.head(of: list)
                    while index >= 0 {
                        let following = residency.next(after: index)
                        if index >= first && index <= last { drop(index, &residency) }
                        index = following
                    }
                }
            } else {
                for index in first...last where residency.isResident(index) { drop(index, &residency) }
            }
            residentNow.store(residency.count, ordering: .relaxed)
        }
    }

    /// Drops every resident unit.
    package func forgetAll() { forget(0..<length) }

    package var counts: FaultRegionCounts {
        FaultRegionCounts(onDemand: true, resident: residentNow.load(ordering: .relaxed), peakResident: peakResident.load(ordering: .relaxed),
                          budget: budget, installs: installs.load(ordering: .relaxed), damaged: damaged.load(ordering: .relaxed),
                          installedFromWrites: installedFromWrites.load(ordering: .relaxed))
    }
}

/// Where a unit of a region is (`Residency.place`).
private enum Place {
    static let absent: UInt8 = 0
    static let probation: UInt8 = 1
    static let protected: UInt8 = 2
    /// Not resident, dropped before (`droppedAt` says when).
    static let dropped: UInt8 = 3
}

/// Which units of a region are resident, in two lists, oldest first (the 2Q cache of the
/// header), in memory allocated once: whoever holds the region's lock allocates nothing
/// (invariant 2). The lists are linked through `next` and `previous`, so that `forget` can
/// take a unit out of the middle.
private struct Residency {
    let place: UnsafeMutablePointer<UInt8>
    /// When each unit was last dropped, counted in drops (`drops`, wrapping): a unit dropped
    /// within the last `budget` drops is hot when it faults again (see the header).
    private let droppedAt: UnsafeMutablePointer<UInt32>
    private let next: UnsafeMutablePointer<Int32>
    private let previous: UnsafeMutablePointer<Int32>
    private var probation = UnitList()
    private var protected = UnitList()
    private var drops: UInt32 = 0
    private let budget: Int
    /// The units probation keeps before its oldest is dropped first.
    private let probationShare: Int

    init(units: Int, budget: Int) {
        place = .allocate(capacity: units)
        place.initialize(repeating: Place.absent, count: units)
        droppedAt = .allocate(capacity: units)
        droppedAt.initialize(repeating: 0, count: units)
        next = .allocate(capacity: units)
        next.initialize(repeating: -1, count: units)
        previous = .allocate(capacity: units)
        previous.initialize(repeating: -1, count: units)
        self.budget = budget
        probationShare = max(1, budget / 4)
    }

    func deallocate() {
        place.deallocate()
        droppedAt.deallocate()
        next.deallocate()
        previous.deallocate()
    }

    var count: Int { probation.count + protected.count }

    func wasDropped(_ index: Int) -> Bool { place[index] == Place.dropped }

    func isResident(_ index: Int) -> Bool {
        place[index] == Place.probation || place[index] == Place.protected
    }

    /// A unit just installed: hot when dropped recently and wanted again (see the header).
    mutating func admit(_ index: Int, droppedBefore: Bool) {
        // Clamped: a budget of more units than UInt32 counts (a cache size of `.max`, "no
        // bound") counts every unit dropped before as recent, where the conversion trapped.
        let hot = droppedBefore && drops &- droppedAt[index] <= UInt32(clamping: budget)
        place[index] = hot ? Place.protected : Place.probation
        if hot { append(index, to: &protected) } else { append(index, to: &probation) }
    }

    /// The unit to drop: the oldest of probation while it is over its share, else of the
    /// protected list; never `spared`, the unit just installed (invariant 4), which is the
    /// newest of its list: a list that holds only it is passed over.
    func oldest(sparing spared: Int) -> Int {
        let probationCanGive = probation.count > (place[spared] == Place.probation ? 1 : 0)
        let protectedCanGive = protected.count > (place[spared] == Place.protected ? 1 : 0)
        let fromProbation = probationCanGive && (probation.count > probationShare || !protectedCanGive)
        return Int(fromProbation ? probation.head : protected.head)
    }

    /// Takes resident unit `index` out of its list, as dropped now.
    mutating func remove(_ index: Int) {
        if place[index] == Place.probation { unlink(index, from: &probation) } else { unlink(index, from: &protected) }
        place[index] = Place.dropped
        droppedAt[index] = drops
        drops &+= 1
    }

    /// The oldest unit of list 0 (probation) or 1 (protected); -1 when it is empty.
    func head(of list: Int) -> Int { Int(list == 0 ? probation.head : protected.head) }

    /// The unit after resident unit `index` in its list; -1 after the newest.
    func next(after index: Int) -> Int { Int(next[index]) }

    private func append(_ index: Int, to list: inout UnitList) {
        let i = Int32(index)
        previous[index] = list.tail
        next[index] = -1
        if list.tail >= 0 { next[Int(list.tail)] = i } else { list.head = i }
        list.tail = i
        list.count += 1
    }

    private func unlink(_ index: Int, from list: inout UnitList) {
        let before = previous[index], after = next[index]
        if before >= 0 { next[Int(before)] = after } else { list.head = after }
        if after >= 0 { previous[Int(after)] = before } else { list.tail = before }
        next[index] = -1
        previous[index] = -1
        list.count -= 1
    }
}

/// The ends of a list of units linked through `Residency.next` and `previous` (-1: none).
private struct UnitList {
    var head: Int32 = -1
    var tail: Int32 = -1
    var count = 0
}
