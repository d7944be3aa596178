#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CStorageSupport
import Synchronization

// The region a compressed copy is read through in place.
//
// The engine reads nodes through raw pointers into one mapping of the file (NodeView, the
// trees, the layers above keep pointers derived from node bases). So a compressed copy is read
// through a mapping too: an anonymous region the size of its logical image, registered with
// Linux's userfaultfd. A thread that touches a page no block fills yet stops in the kernel;
// one handler thread per region reads that page's block, verifies and decompresses it, and
// installs it whole (UFFDIO_COPY), which wakes the thread. Every pointer stays valid: the
// address of every byte is fixed for the region's life, and a byte reads the same every time
// it is read, because the file is never written (CompressedFormat.swift, invariant 5).
//
// The memory is bounded: the handler keeps at most `budget` blocks resident and drops one
// (MADV_DONTNEED) when it installs another over the budget. A later touch of a dropped block
// faults again and gets the same bytes. Which one it drops: the handler never sees a hit, only
// faults, so it learns what is hot from blocks that fault again soon after they were dropped
// (a 2Q cache): a block faulting for the first time goes to a probation queue (a quarter of
// the budget), a block dropped recently (within the last `budget` drops) goes to the protected
// queue, and the oldest block of probation is dropped first while probation is over its
// share. A random lookup touches the tree's upper nodes each time and a leaf once: the upper
// nodes come back soon after they are dropped, go to the protected queue and stay, where
// dropping the oldest install (FIFO) dropped them every `budget` faults, so that every lookup
// faulted all the way down (W7 lookups: issue 25). Invariants:
//   1. The handler never touches the region's pages itself (it would wait on itself): it
//      decompresses into its own buffer and copies with the kernel.
//   2. The handler allocates nothing and takes no lock while threads wait on it: a faulting
//      thread may hold any lock of this process, and the handler must not wait for one.
//   3. A block is resident whole or not at all (installed and dropped whole); the handler
//      alone changes which, so its bookkeeping needs no lock. Counts for tests are atomics.
//   4. The budget is at least four blocks: one instruction touches at most two pages (an
//      unaligned load across a block boundary), and dropping one of those to install the
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
// kernel without userfaultfd), the region is inflated instead: every block decompressed into
// an anonymous mapping at open, whatever the budget (`CompressedReading.inflate`, the fallback
// tests force). With user-mode-only faults, a system call given a pointer into a page not
// resident fails (EFAULT) rather than faulting: the engine only reads the region from its own
// code, never through a system call.

/// How a compressed copy is read in place.
package enum CompressedReading: Sendable, Equatable {
    /// Blocks decompressed on first touch through userfaultfd, at most the cache budget of them
    /// resident; the whole image inflated where userfaultfd is not allowed.
    case onDemand
    /// The whole image decompressed into memory at open (the fallback; tests force it).
    case inflate
}

/// What a region of a compressed copy has done, for tests and tools.
package struct FaultRegionCounts: Sendable, Equatable {
    /// Whether blocks are decompressed on demand (false: the image was inflated at open).
    package var onDemand: Bool
    /// Why the image was inflated, when it was (userfaultfd refused, or inflating asked for).
    package var fallbackReason: String? = nil
    /// Blocks resident now, and the most ever resident at once.
    package var resident: Int
    package var peakResident: Int
    /// The most blocks the region keeps resident.
    package var budget: Int
    /// Blocks installed (decompressed), and of them those that did not verify (zeros).
    package var installs: Int
    package var damaged: Int
}

/// A region as its mappings hold it: when the last goes, the handler is stopped and joined, and
/// the region goes with the thread (invariant 5).
final class FaultRegionHandle: @unchecked Sendable {
    // @unchecked: `region` is immutable; what it does across threads is its own (see above).
    let region: FaultRegion

    fileprivate init(_ region: FaultRegion) { self.region = region }

    deinit { region.stop() }
}

/// The handler's state (see the header): touched by the handler thread alone, but for the
/// counts, which are atomics.
final class FaultRegion: @unchecked Sendable {
    // @unchecked: `place`, the queues and the buffers belong to the handler thread alone
    // (invariant 3); the rest is immutable after init or atomic.
    let base: UnsafeMutableRawPointer
    let length: Int
    let blocks: CompressedBlocks
    let budget: Int
    private let uffd: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private var thread: pthread_t?
    private let buffer: UnsafeMutableRawPointer
    private let scratch: UnsafeMutableRawPointer
    /// Where each block is (`Place`), and the two queues of resident blocks, oldest first.
    private let place: UnsafeMutablePointer<UInt8>
    private var probation: BlockQueue
    private var protected: BlockQueue
    /// When each block was last dropped, counted in drops (`drops`, wrapping): a block dropped
    /// within the last `budget` drops is hot when it faults again (see the header).
    private let droppedAt: UnsafeMutablePointer<UInt32>
    private var drops: UInt32 = 0
    /// The blocks probation keeps before its oldest is dropped first.
    private let probationShare: Int
    let residentNow = Atomic<Int>(0), peakResident = Atomic<Int>(0), installs = Atomic<Int>(0), damaged = Atomic<Int>(0)

    /// A region for `blocks` with at most `cacheSize` bytes of blocks resident; nil when
    /// userfaultfd is not available (`reason` says why).
    static func make(_ blocks: CompressedBlocks, cacheSize: Int) -> (region: FaultRegionHandle?, reason: String) {
        var fd: Int32 = -1
        var err = openrealm_uffd_open(1, &fd)
        if err == EINVAL { err = openrealm_uffd_open(0, &fd) }
        guard err == 0 else { return (nil, "userfaultfd is not available (errno \(err))") }
        let blockSize = blocks.layout.blockSize
        let length = blocks.layout.blocks.count * blockSize
        // Blocks are installed and dropped whole, in pages (16 KiB blocks on a 64 KiB-page kernel
        // could not be).
        guard blockSize % Int(sysconf(Int32(_SC_PAGESIZE))) == 0 else {
            close(fd)
            return (nil, "the copy's blocks of \(blockSize) bytes are not whole pages of this system")
        }
        guard let base = mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0), base != MAP_FAILED else {
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
        let region = FaultRegion(base: base, length: length, blocks: blocks, budget: max(4, cacheSize / blockSize), uffd: fd,
                                 stopPipe: (pipeFds[0], pipeFds[1]))
        guard region.start() else { return (nil, "no thread for the fault handler") }
        return (FaultRegionHandle(region), "")
    }

    private init(base: UnsafeMutableRawPointer, length: Int, blocks: CompressedBlocks, budget: Int, uffd: Int32, stopPipe: (read: Int32, write: Int32)) {
        self.base = base
        self.length = length
        self.blocks = blocks
        self.budget = budget
        self.uffd = uffd
        self.stopPipe = stopPipe
        // Page-aligned: UFFDIO_COPY copies whole pages from it.
        var aligned: UnsafeMutableRawPointer?
        posix_memalign(&aligned, CompressedFormat.pageSize, blocks.layout.blockSize)
        buffer = aligned!
        scratch = .allocate(byteCount: blocks.readBufferSize, alignment: 16)
        let n = blocks.layout.blocks.count
        place = .allocate(capacity: n)
        place.initialize(repeating: Place.absent, count: n)
        probation = BlockQueue(capacity: budget + 1)
        protected = BlockQueue(capacity: budget + 1)
        droppedAt = .allocate(capacity: n)
        droppedAt.initialize(repeating: 0, count: n)
        probationShare = max(1, budget / 4)
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
        scratch.deallocate()
        place.deallocate()
        probation.deallocate()
        protected.deallocate()
        droppedAt.deallocate()
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

    /// The handler loop: install the block of each fault until told to stop.
    private func run() {
        let blockSize = blocks.layout.blockSize
        while true {
            var address: UInt64 = 0
            let err = openrealm_uffd_next_fault(uffd, stopPipe.read, &address)
            if err == ECANCELED { return }
            // Threads may be waiting on a fault: never leave them; try again.
            guard err == 0 else { usleep(1000); continue }
            let offset = Int(bitPattern: UInt(address)) - Int(bitPattern: base)
            guard offset >= 0, offset < length else { continue }
            let index = offset / blockSize
            let start = base + index * blockSize
            let before = place[index]
            if before == Place.probation || before == Place.protected {
                // A second fault in a block installed since it was raised.
                _ = openrealm_uffd_wake(uffd, start, UInt64(blockSize))
                continue
            }
            if !blocks.fill(index, into: buffer, scratch: scratch) { damaged.add(1, ordering: .relaxed) }
            var copied = openrealm_uffd_copy(uffd, start, buffer, UInt64(blockSize))
            if copied == EEXIST {
                // Part of the block is present, which invariant 3 rules out: make it whole.
                madvise(start, blockSize, MADV_DONTNEED)
                copied = openrealm_uffd_copy(uffd, start, buffer, UInt64(blockSize))
            }
            installs.add(1, ordering: .relaxed)
            guard copied == 0 else {
                // Not installed (the kernel was short of memory): the woken thread faults
                // again, and the block is tried again then.
                _ = openrealm_uffd_wake(uffd, start, UInt64(blockSize))
                continue
            }
            // Dropped recently and wanted again: hot (see the header).
            let hot = before == Place.dropped && drops &- droppedAt[index] <= UInt32(budget)
            place[index] = hot ? Place.protected : Place.probation
            if hot { protected.push(Int32(index)) } else { probation.push(Int32(index)) }
            while probation.count + protected.count > budget { dropOne(newInProbation: !hot) }
            let count = probation.count + protected.count
            residentNow.store(count, ordering: .relaxed)
            if count > peakResident.load(ordering: .relaxed) { peakResident.store(count, ordering: .relaxed) }
        }
    }

    /// Drops the oldest block of probation while it is over its share, else of the protected
    /// queue, and notes when. The block just installed is the newest of its
    /// queue and is never the one dropped (invariant 4): a queue that holds only it is passed over.
    private func dropOne(newInProbation: Bool) {
        let probationCanGive = probation.count > (newInProbation ? 1 : 0)
        let protectedCanGive = protected.count > (newInProbation ? 0 : 1)
        let fromProbation = probationCanGive && (probation.count > probationShare || !protectedCanGive)
        let oldest = Int(fromProbation ? probation.pop() : protected.pop())
        madvise(base + oldest * blocks.layout.blockSize, blocks.layout.blockSize, MADV_DONTNEED)
        place[oldest] = Place.dropped
        droppedAt[oldest] = drops
        drops &+= 1
    }

    var counts: FaultRegionCounts {
        FaultRegionCounts(onDemand: true, resident: residentNow.load(ordering: .relaxed), peakResident: peakResident.load(ordering: .relaxed),
                          budget: budget, installs: installs.load(ordering: .relaxed), damaged: damaged.load(ordering: .relaxed))
    }
}

/// Where a block of a region is (FaultRegion.place).
private enum Place {
    static let absent: UInt8 = 0
    static let probation: UInt8 = 1
    static let protected: UInt8 = 2
    /// Not resident, dropped before (`droppedAt` says when).
    static let dropped: UInt8 = 3
}

/// A ring of block indices, oldest first, in memory allocated once (the handler allocates
/// nothing while threads wait on it: invariant 2).
private struct BlockQueue {
    let capacity: Int
    private let slots: UnsafeMutablePointer<Int32>
    private var head = 0
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        slots = .allocate(capacity: capacity)
    }

    func deallocate() { slots.deallocate() }

    mutating func push(_ index: Int32) {
        precondition(count < capacity, "a block queue over its capacity")
        slots[(head + count) % capacity] = index
        count += 1
    }

    mutating func pop() -> Int32 {
        precondition(count > 0, "a block taken from an empty queue")
        let index = slots[head]
        head = (head + 1) % capacity
        count -= 1
        return index
    }
}

extension CompressedBlocks {
    /// The whole image decompressed into an anonymous mapping (the fallback), read-only.
    /// Returns the mapping and how many blocks did not verify (installed as zeros).
    func inflate(path: String) throws(StorageError) -> (base: UnsafeMutableRawPointer, length: Int, damaged: Int) {
        let length = layout.blocks.count * layout.blockSize
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0), base != MAP_FAILED else {
            throw StorageError.system("mmap", path: path, errno: errno)
        }
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: readBufferSize, alignment: 16)
        defer { scratch.deallocate() }
        var damaged = 0
        for index in layout.blocks.indices where !fill(index, into: base + index * layout.blockSize, scratch: scratch) {
            damaged += 1
        }
        mprotect(base, length, PROT_READ)
        return (base, length, damaged)
    }
}
