#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An encrypted realm file: ciphertext on the disk, plaintext in memory for the mappings.
///
/// The format is in EncryptionHeader.swift: every 4 KiB page is one AES-256-XTS data unit
/// whose tweak is the page's index, apart from the header's first 128 bytes, kept in the clear.
/// XTS encrypts each 16-byte block on its own given its index in the page, so a write of some
/// blocks encrypts just those blocks (and the blocks before them in the page, which OpenSSL
/// takes as one unit, and which are thrown away) and writes only them: a commit writes the
/// same byte ranges it writes to a plain file, rounded to whole blocks, and crash safety
/// argues as for a plain file (E1: no block holds bytes of two nodes).
///
/// Reading. The engine reads through raw pointers into a `Mapping` that live as long as the
/// mapping, so the mapping must hold plaintext that stays put. Here it is an image of the file
/// decrypted: a FaultRegion (FaultRegion.swift) whose 16 KiB units are decrypted from the disk
/// when first touched, at most `cacheSize` bytes of them resident (the oldest dropped and
/// decrypted again when touched again), written through by this process's writes, and whose
/// units are dropped when another process has written the file (`showOtherProcessesWrites`),
/// before any of its versions is read. Where userfaultfd is not allowed, each image is the
/// whole file decrypted into anonymous memory when mapped, and brought up to date by
/// decrypting it again (`EncryptedReading.whole`, which tests force): memory then grows with
/// the file.
///
/// Invariants, beside E1-E8 (EncryptionHeader.swift):
///   I1. Every live image holds, for every byte of the file that a version this process may
///       read reaches, the plaintext of the file's bytes, or (a region) nothing resident yet:
///       written through by `write` to every image still mapped (a version may be read through
///       an older mapping than the newest), and dropped (a region) or refreshed from the disk
///       (a whole image) by `showOtherProcessesWrites` for other processes' writes. A region's
///       units are filled under its lock after every disk change its writer follows
///       (FaultRegion.swift, invariant 3), so none is left behind the disk.
///   I2. A whole image's refresh changes only the 16-byte blocks that differ from the disk,
///       never a block a pinned version reaches (those are the same on the disk: copy-on-write
///       across processes, ProcessCoordination.swift), so readers in other threads read on
///       unhindered; a region's dropped units decrypt again to the same bytes.
///   I3. Partial blocks (a write that does not start or end on a block) are completed from the
///       disk, decrypted, never from an image, which may be behind the file.
///   I4. The file's size is always a whole number of pages, and growth writes encrypted zeros:
///       its plaintext reads as zeros, as a plain file's growth does.
///   I5. Bytes given to `write` that lie in a region are first copied into the file's own
///       buffer: `writeThrough` holds the region's lock, under which nothing may fault
///       (FaultRegion.swift, invariant 2).
package final class EncryptedFile: StorageFile, @unchecked Sendable {
    // @unchecked: the images are written only under `state`'s lock; readers reach them only
    // through mappings, at bytes no write changes while they are readable (I2).
    package let path: String
    /// The file on the disk (a test puts its crash-simulating layer here, under the cipher).
    private let inner: StorageFile
    private let cipher: PageCipher
    private let state = Locked(State())
    /// Where a page entered mid-way is encrypted (`writeEncrypted`): used under `state`'s lock.
    private let scratchPage = UnsafeMutableRawBufferPointer.allocate(byteCount: PageCipher.pageSize, alignment: 16)

    private static let pageSize = PageCipher.pageSize
    private static let block = 16
    private static let plaintext = EncryptionHeader.plaintextLength

    private let reading: EncryptedReading
    private let cacheSize: Int

    /// Bytes of the units a mapping decrypts and keeps (its `counts` are in units).
    package static let unitSize = EncryptedPageSource.unitSize

    /// The default budget of decrypted pages a mapping keeps resident.
    package static let defaultCacheSize = 256 << 20

    private struct State {
        /// The image mappings made so far, newest last; released ones drop out.
        var images: [Image] = []
        /// The newest image, kept while the file is open (as MemoryFile keeps its region).
        var current: Mapping?
        /// Where writes are encrypted, kept from one to the next.
        var buffer: [UInt8] = []
        /// Where the plaintext of a write is copied first (I5).
        var plain: [UInt8] = []
        /// Why images are whole, when they are.
        var fallbackReason: String?
    }

    /// An image: its mapping, and its region unless it is whole.
    private struct Image {
        weak var mapping: Mapping?
        weak var region: FaultRegionHandle?
    }

    /// - Parameters:
    ///   - reading: whether mappings decrypt on demand (bounded by `cacheSize` bytes each) or
    ///     whole (the fallback, which tests force).
    package init(inner: StorageFile, cipher: PageCipher, path: String, reading: EncryptedReading = .onDemand,
                 cacheSize: Int = EncryptedFile.defaultCacheSize) {
        self.inner = inner
        self.cipher = cipher
        self.path = path
        self.reading = reading
        self.cacheSize = cacheSize
    }

    deinit { scratchPage.deallocate() }

    package func size() throws(StorageError) -> UInt64 { try inner.size() }

    package func sync() throws(StorageError) { try inner.sync() }

    package func startWriteback(at offset: UInt64, length: Int) { inner.startWriteback(at: offset, length: length) }

    // MARK: Reading from the disk

    /// Reads and decrypts: what a plain file's `read` would give.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        guard buffer.count > 0 else { return 0 }
        let first = offset / UInt64(Self.pageSize)
        let end = offset + UInt64(buffer.count)
        let last = (end - 1) / UInt64(Self.pageSize)
        var done = 0
        var page = [UInt8](repeating: 0, count: Self.pageSize)
        for index in first...last {
            let got = try decryptedPage(index, into: &page)
            let pageStart = index * UInt64(Self.pageSize)
            let from = Int(max(offset, pageStart) - pageStart)
            let to = min(Int(min(end, pageStart + UInt64(Self.pageSize)) - pageStart), got)
            guard to > from else { break }
            page.withUnsafeBytes { buffer.baseAddress!.advanced(by: done).copyMemory(from: $0.baseAddress! + from, byteCount: to - from) }
            done += to - from
            if got < Self.pageSize { break }
        }
        return done
    }

    /// Page `index` decrypted into `page`; returns how many of its bytes the file holds.
    private func decryptedPage(_ index: UInt64, into page: inout [UInt8]) throws(StorageError) -> Int {
        let got = try page.withUnsafeMutableBytes { buffer in
            Result { () throws(StorageError) in try inner.read(into: buffer, at: index * UInt64(Self.pageSize)) }
        }.get()
        decrypt(page: index, &page, count: got)
        return got
    }

    /// Decrypts the first `count` bytes of page `index` in `bytes` (its whole blocks; a torn
    /// tail of fewer than 16 bytes, which only a damaged file has, is left as it is).
    private func decrypt(page index: UInt64, _ bytes: inout [UInt8], count: Int) {
        var clear = [UInt8](repeating: 0, count: Self.plaintext)
        bytes.withUnsafeMutableBytes { buffer in
            clear.withUnsafeMutableBytes { clear in
                Self.decryptInPlace(page: index, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]), cipher: cipher, clear: clear)
            }
        }
    }

    // MARK: Writing

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        guard bytes.count > 0 else { return }
        try state.withLock { (state) throws(StorageError) in
            // The buffers, out of the state while they are borrowed (swapped: no copy).
            var plain: [UInt8] = [], buffer: [UInt8] = []
            swap(&plain, &state.plain)
            swap(&buffer, &state.buffer)
            defer {
                swap(&plain, &state.plain)
                swap(&buffer, &state.buffer)
            }
            state.images.removeAll { $0.mapping == nil }
            // I5: bytes that lie in a region are copied first (touching them may fault); the
            // others, nearly every write (a commit's own buffers), are used as they are.
            let start = UInt(bitPattern: bytes.baseAddress!), end = start + UInt(bytes.count)
            let inRegion = state.images.contains { image in
                guard let region = image.region?.region else { return false }
                let base = UInt(bitPattern: region.base)
                return start < base + UInt(region.length) && base < end
            }
            if inRegion, plain.count < bytes.count { plain = [UInt8](repeating: 0, count: max(bytes.count, plain.count * 2)) }
            try plain.withUnsafeMutableBytes { plain in
                var bytes = bytes
                if inRegion {
                    plain.baseAddress!.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                    bytes = UnsafeRawBufferPointer(rebasing: plain[0..<bytes.count])
                }
                let written = Result { () throws(StorageError) in try writeEncrypted(bytes, at: offset, buffer: &buffer) }
                guard case .success = written else { return written }
                let newest = state.images.lastIndex { $0.region != nil }
                for (i, image) in state.images.enumerated() {
                    if let region = image.region {
                        region.region.writeThrough(bytes, at: Int(offset), installing: i == newest)
                        continue
                    }
                    guard let mapping = image.mapping, offset < UInt64(mapping.length) else { continue }
                    let count = min(bytes.count, mapping.length - Int(offset))
                    // The image is this file's own memory (`map`); no reader reaches these bytes.
                    UnsafeMutableRawPointer(mutating: mapping.base + Int(offset)).copyMemory(from: bytes.baseAddress!, byteCount: count)
                }
                return written
            }.get()
        }
    }

    /// Encrypts `bytes` for `offset` and writes them with one call: the blocks they cover,
    /// each page's encrypted in the buffer in place (XTS numbers the blocks from the page's
    /// start, so a first page entered mid-way is encrypted in a scratch page).
    private func writeEncrypted(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, buffer: inout [UInt8]) throws(StorageError) {
        var bytes = bytes
        var offset = offset
        // The header's clear bytes are written as they are.
        if offset < UInt64(Self.plaintext) {
            let clear = min(bytes.count, Self.plaintext - Int(offset))
            try inner.write(UnsafeRawBufferPointer(rebasing: bytes[0..<clear]), at: offset)
            bytes = UnsafeRawBufferPointer(rebasing: bytes[clear...])
            offset += UInt64(clear)
            guard bytes.count > 0 else { return }
        }
        let end = offset + UInt64(bytes.count)
        let start = offset / UInt64(Self.block) * UInt64(Self.block)
        let stop = (end + UInt64(Self.block) - 1) / UInt64(Self.block) * UInt64(Self.block)
        let count = Int(stop - start)
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: max(count, buffer.count * 2)) }
        // I3: the rest of a partial first or last block, as the disk holds it.
        if start != offset { try readBlock(at: start, into: &buffer, at: 0) }
        if stop != end, stop - UInt64(Self.block) != start || start == offset {
            try readBlock(at: stop - UInt64(Self.block), into: &buffer, at: count - Self.block)
        }
        let pageSize = UInt64(Self.pageSize)
        buffer.withUnsafeMutableBytes { plain in
            (plain.baseAddress! + Int(offset - start)).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            var position = start
            while position < stop {
                let index = position / pageSize
                let pageStart = index * pageSize
                let segmentEnd = min(stop, pageStart + pageSize)
                let segment = UnsafeMutableRawBufferPointer(rebasing: plain[Int(position - start)..<Int(segmentEnd - start)])
                if position == pageStart {
                    cipher.encrypt(page: index, segment)
                } else {
                    // The blocks before `at` are encrypted too, whatever they hold, and dropped.
                    let scratch = UnsafeMutableRawBufferPointer(rebasing: scratchPage[0..<Int(segmentEnd - pageStart)])
                    let at = Int(position - pageStart)
                    (scratch.baseAddress! + at).copyMemory(from: segment.baseAddress!, byteCount: segment.count)
                    cipher.encrypt(page: index, scratch)
                    segment.copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch[at...]))
                }
                position = segmentEnd
            }
        }
        try buffer.withUnsafeBytes { cipherText in
            Result { () throws(StorageError) in try inner.write(UnsafeRawBufferPointer(rebasing: cipherText[0..<count]), at: start) }
        }.get()
    }

    /// The plaintext of the 16-byte block at `offset` (zeros past the end of the file) into
    /// `buffer` at `at`.
    private func readBlock(at offset: UInt64, into buffer: inout [UInt8], at: Int) throws(StorageError) {
        var block = [UInt8](repeating: 0, count: Self.block)
        let got = try block.withUnsafeMutableBytes { bytes in
            Result { () throws(StorageError) in try read(into: bytes, at: offset) }
        }.get()
        for i in got..<Self.block { block[i] = 0 }
        buffer.replaceSubrange(at..<(at + Self.block), with: block)
    }

    /// I4: sizes go up to a whole page; growth is encrypted zeros, and the images forget
    /// what lay past a cut.
    package func setSize(_ size: UInt64) throws(StorageError) {
        let size = (size + UInt64(Self.pageSize) - 1) / UInt64(Self.pageSize) * UInt64(Self.pageSize)
        try state.withLock { (state) throws(StorageError) in
            let current = try inner.size()
            if size < current {
                try inner.setSize(size)
                for image in state.images {
                    if let region = image.region {
                        region.region.forget(Int(size)..<region.region.length)
                        continue
                    }
                    guard let mapping = image.mapping, size < UInt64(mapping.length) else { continue }
                    // Zero pages in place of what lay past the cut, which no version reaches.
                    let start = UnsafeMutableRawPointer(mutating: mapping.base + Int(size))
                    _ = madvise(start, mapping.length - Int(size), MADV_DONTNEED)
                }
                return
            }
            guard size > current else { return }
            // The images may hold what lay there before another process cut the file.
            let grown = (current + UInt64(Self.pageSize) - 1) / UInt64(Self.pageSize) * UInt64(Self.pageSize)
            for image in state.images {
                if let region = image.region {
                    region.region.forget(Int(grown)..<Int(size))
                    continue
                }
                guard let mapping = image.mapping, grown < min(size, UInt64(mapping.length)) else { continue }
                let end = min(Int(size), mapping.length)
                _ = madvise(UnsafeMutableRawPointer(mutating: mapping.base + Int(grown)), end - Int(grown), MADV_DONTNEED)
            }
            // Encrypted zeros, a chunk of pages at a time in the buffer writes use; a partial
            // last page (a file cut by hand) has its plaintext tail completed with zeros.
            let start = current / UInt64(Self.pageSize) * UInt64(Self.pageSize)
            let chunkPages = 256
            if state.buffer.count < chunkPages * Self.pageSize { state.buffer = [UInt8](repeating: 0, count: chunkPages * Self.pageSize) }
            var position = start
            while position < size {
                let pages = Int(min(UInt64(chunkPages), (size - position) / UInt64(Self.pageSize)))
                var partial: [UInt8]?
                if position < current {
                    var page = [UInt8](repeating: 0, count: Self.pageSize)
                    let got = try decryptedPage(position / UInt64(Self.pageSize), into: &page)
                    for j in got..<Self.pageSize { page[j] = 0 }
                    partial = page
                }
                try state.buffer.withUnsafeMutableBytes { chunk in
                    let bytes = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<(pages * Self.pageSize)])
                    bytes.initializeMemory(as: UInt8.self, repeating: 0)
                    if let partial { partial.withUnsafeBytes { bytes.copyMemory(from: $0) } }
                    for i in 0..<pages {
                        let page = UnsafeMutableRawBufferPointer(rebasing: bytes[(i * Self.pageSize)..<((i + 1) * Self.pageSize)])
                        let index = position / UInt64(Self.pageSize) + UInt64(i)
                        // Page 0's first bytes are the header's clear bytes (E-format): kept
                        // as they are, not encrypted, or they would read back as ciphertext.
                        var clear = [UInt8]()
                        if index == 0 { clear = Array(page[0..<Self.plaintext]) }
                        cipher.encrypt(page: index, page)
                        if index == 0 { clear.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: page[0..<Self.plaintext]).copyMemory(from: $0) } }
                    }
                    return Result { () throws(StorageError) in try inner.write(UnsafeRawBufferPointer(bytes), at: position) }
                }.get()
                position += UInt64(pages * Self.pageSize)
            }
        }
    }

    // MARK: The images

    /// An image of `length` bytes (at least): the newest when it is as long, else a new one, a
    /// region decrypted on demand or (the fallback) the whole file decrypted.
    package func map(length: Int) throws(StorageError) -> Mapping {
        try state.withLock { (state) throws(StorageError) -> Mapping in
            if let current = state.current, current.length >= length { return current }
            let unit = EncryptedPageSource.unitSize
            let length = (length + unit - 1) / unit * unit
            var made: (mapping: Mapping, region: FaultRegionHandle?)?
            if reading == .onDemand, state.fallbackReason == nil {
                let source = EncryptedPageSource(inner: inner, cipher: cipher)
                let attempt = FaultRegion.make(length: length, source: source, cacheSize: cacheSize, writable: true)
                if let handle = attempt.region {
                    let mapping = Mapping(base: UnsafeRawPointer(handle.region.base), length: handle.region.length, path: path) {
                        withExtendedLifetime(handle) {}
                    }
                    made = (mapping, handle)
                } else {
                    state.fallbackReason = attempt.reason
                }
            } else if state.fallbackReason == nil {
                state.fallbackReason = reading == .whole ? "decrypting whole images was asked for" : "userfaultfd is not available (a test)"
            }
            if made == nil {
                let mapping = try Self.allocate(length: length, path: path)
                try fill(mapping, refreshing: false)
                made = (mapping, nil)
            }
            state.images.removeAll { $0.mapping == nil }
            state.images.append(Image(mapping: made!.mapping, region: made!.region))
            state.current = made!.mapping
            return made!.mapping
        }
    }

    /// Brings every image up to date with the file's bytes, which other processes write: before
    /// the store reads anything they may have written (Store+Process.swift). A region drops its
    /// units (they decrypt again when touched); a whole image is decrypted again.
    package func showOtherProcessesWrites() throws(StorageError) {
        try state.withLock { (state) throws(StorageError) in
            state.images.removeAll { $0.mapping == nil }
            for image in state.images {
                if let region = image.region {
                    region.region.forgetAll()
                    continue
                }
                guard let mapping = image.mapping else { continue }
                try fill(mapping, refreshing: true)
            }
        }
    }

    /// What the newest image's region has done; for a whole image, every page resident.
    package var counts: FaultRegionCounts {
        state.withLock { state in
            if let image = state.images.last(where: { $0.mapping != nil }), let region = image.region {
                return region.region.counts
            }
            let pages = state.current.map { $0.length / EncryptedPageSource.unitSize } ?? 0
            return FaultRegionCounts(onDemand: false, fallbackReason: state.fallbackReason, resident: pages, peakResident: pages, budget: pages,
                                     installs: pages, damaged: 0)
        }
    }

    /// Decrypts the file into `mapping`'s image; `refreshing`: only the blocks that differ
    /// are written (I2).
    private func fill(_ mapping: Mapping, refreshing: Bool) throws(StorageError) {
        let size = min(try inner.size(), UInt64(mapping.length))
        let chunk = 256 * Self.pageSize
        var buffer = [UInt8](repeating: 0, count: chunk)
        var position: UInt64 = 0
        let image = UnsafeMutableRawPointer(mutating: mapping.base)
        while position < size {
            let want = Int(min(UInt64(chunk), size - position))
            let got = try buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(StorageError) in
                    try inner.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[0..<want]), at: position)
                }
            }.get()
            guard got > 0 else { break }
            var page = [UInt8](repeating: 0, count: Self.pageSize)
            var at = 0
            while at < got {
                let count = min(Self.pageSize, got - at)
                let index = (position + UInt64(at)) / UInt64(Self.pageSize)
                buffer.withUnsafeBytes { chunk in
                    page.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: chunk[at..<(at + count)])) }
                }
                decrypt(page: index, &page, count: count)
                Self.place(page, count: count, at: image + Int(position) + at, refreshing: refreshing)
                at += count
            }
            position += UInt64(got)
        }
    }

    /// Puts the first `count` bytes of `page` at `target` in an image: all of them, or when
    /// `refreshing` only the blocks that differ (I2).
    private static func place(_ page: [UInt8], count: Int, at target: UnsafeMutableRawPointer, refreshing: Bool) {
        page.withUnsafeBytes { plain in
            guard refreshing else {
                target.copyMemory(from: plain.baseAddress!, byteCount: count)
                return
            }
            var block = 0
            while block < count {
                let n = min(Self.block, count - block)
                if memcmp(target + block, plain.baseAddress! + block, n) != 0 {
                    (target + block).copyMemory(from: plain.baseAddress! + block, byteCount: n)
                }
                block += n
            }
        }
    }

    /// Decrypts `bytes`, the first bytes of page `index`, in place: their whole blocks, from the
    /// page's start (block j of the buffer is block j of the page), the header's clear bytes put
    /// back from `clear` (at least 128 bytes of scratch) on page 0.
    fileprivate static func decryptInPlace(page index: UInt64, _ bytes: UnsafeMutableRawBufferPointer, cipher: PageCipher,
                                           clear: UnsafeMutableRawBufferPointer) {
        let blocks = bytes.count / block * block
        let skip = index == 0 ? plaintext : 0
        guard blocks > skip else { return }
        if skip > 0 { clear.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<skip])) }
        cipher.decrypt(page: index, UnsafeMutableRawBufferPointer(rebasing: bytes[0..<blocks]))
        if skip > 0 { UnsafeMutableRawBufferPointer(rebasing: bytes[0..<skip]).copyMemory(from: UnsafeRawBufferPointer(clear)) }
    }

    private static func allocate(length: Int, path: String) throws(StorageError) -> Mapping {
        let length = (length + pageSize - 1) / pageSize * pageSize
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
              base != MAP_FAILED else {
            throw StorageError.system("mmap", path: path, errno: errno)
        }
        #if os(Linux)
        // In 2 MiB pages where the system allows: a plain file's mapping gets them from the page
        // cache, and lookups and scans through the image slowed by 5-10% without (W3, W5 in
        // BENCHMARKS.md). A hint: refused, the image works in 4 KiB pages.
        _ = madvise(base, length, MADV_HUGEPAGE)
        #endif
        return Mapping(base: UnsafeRawPointer(base), length: length, path: path) { munmap(base, length) }
    }
}

/// How an encrypted file is read through its mappings.
package enum EncryptedReading: Sendable, Equatable {
    /// Pages decrypted when first touched, through userfaultfd, at most the cache budget of
    /// them resident per mapping; whole images where userfaultfd is not allowed.
    case onDemand
    /// The whole file decrypted into each image when mapped (the fallback; tests force it).
    case whole
    /// Tests: as `whole`, with the reason a refusal of userfaultfd gives.
    case wholeAsIfRefused
}

/// An encrypted file's pages as the units of a region: read from the disk and decrypted.
final class EncryptedPageSource: FaultSource, @unchecked Sendable {
    // @unchecked: `clear` is used by `fill` alone, which only the region's handler calls, one
    // call at a time (FaultSource); the rest is immutable.
    private let inner: StorageFile
    private let cipher: PageCipher
    /// The header's clear bytes, kept aside while page 0 is decrypted.
    private let clear: UnsafeMutableRawBufferPointer

    /// Four pages: a fault decrypts 16 KiB, which a scan would touch next anyway, and a random
    /// lookup wastes little.
    static let unitSize = 4 * PageCipher.pageSize

    init(inner: StorageFile, cipher: PageCipher) {
        self.inner = inner
        self.cipher = cipher
        clear = .allocate(byteCount: EncryptionHeader.plaintextLength, alignment: 16)
    }

    deinit { clear.deallocate() }

    var unitSize: Int { Self.unitSize }

    /// The unit's pages as the disk holds them, decrypted; zeros past the end of the file, and
    /// in place of what cannot be read (a failed read: false; zeros never pass for a node).
    func fill(_ index: Int, into buffer: UnsafeMutableRawPointer) -> Bool {
        let offset = UInt64(index * Self.unitSize)
        var got = 0
        var good = true
        while got < Self.unitSize {
            let part = UnsafeMutableRawBufferPointer(start: buffer + got, count: Self.unitSize - got)
            guard let n = try? inner.read(into: part, at: offset + UInt64(got)) else {
                good = false
                break
            }
            guard n > 0 else { break }
            got += n
        }
        if got < Self.unitSize { memset(buffer + got, 0, Self.unitSize - got) }
        let pageSize = PageCipher.pageSize
        var at = 0
        while at < got {
            let count = min(pageSize, got - at)
            EncryptedFile.decryptInPlace(page: (offset + UInt64(at)) / UInt64(pageSize), UnsafeMutableRawBufferPointer(start: buffer + at, count: count),
                                         cipher: cipher, clear: clear)
            at += pageSize
        }
        return good
    }
}
