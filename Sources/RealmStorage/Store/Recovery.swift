/// Opening a file: check the header, pick the newest version whose commit verifies (from a
/// root slot or the chain of run headers after one: FileHeader.swift), decode its top node and
/// free list.
enum Recovery {
    struct Result {
        var slot: RootSlot
        /// The root slot holding the version, or -1 when its root is a run header.
        var slotIndex: Int
        var top: TopState
        var free: FreeSpace
        var mapping: Mapping
        var physicalSize: UInt64
        /// A slot that names a newer version whose commit did not verify (to be cleared).
        var refusedSlot: Int?
        /// A run header where this version's successor's goes, naming a newer version that did
        /// not verify (to be cleared, as the slot: the successor written instead may go into a
        /// slot and leave it, and a later write could make it verify).
        var refusedRunHeader: UInt64?
        /// The versions after this one wrote what the slot's commit record lists: the record of
        /// the last commit of a group lists the whole group's extents (Store+GroupCommit.swift).
        var coveredFrom: UInt64
        /// The slot the version's chain starts from (the version itself when in a slot).
        var head: (version: UInt64, slotIndex: Int)
        /// The format version in the file's header.
        var format: UInt32
    }

    /// `checkExtents` false: the bytes the commit wrote are vouched for otherwise (the blocks
    /// of a compressed copy, each verified when decompressed); its record is still checked.
    /// `sealing`: how the file's nodes are sealed (NodeSealing.swift).
    static func open(file: StorageFile, path: String, minimumMapping: Int = 1 << 30, checkExtents: Bool = true,
                     sealing: NodeSealing = .checksum) throws(StorageError) -> Result {
        let size = try file.size()
        guard size >= UInt64(FileHeader.size) else {
            throw StorageError(.invalidDatabase, size == 0 ? "the file is empty; it is not a realm file"
                               : "the file is \(size) bytes, too small to be a realm file", path: path)
        }
        let header = try file.read(count: FileHeader.size, at: 0)
        guard header.count == FileHeader.size, Array(header[0..<8]) == FileHeader.magic else {
            throw StorageError(.invalidDatabase, "the file does not start with the realm header; it is not a realm file (or it is encrypted)", path: path)
        }
        let format = header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self)) }
        // Format 6 is an encrypted file's, read here through its `EncryptedFile` once its key
        // fitted (Store.swift); without one, the header check says it is encrypted.
        guard format <= FileHeader.formatVersion || (format == EncryptionHeader.formatVersion && file is EncryptedFile) else {
            throw StorageError(.unsupportedFormatVersion, "the file has format version \(format); this build reads up to \(FileHeader.formatVersion). Open it with a newer OpenRealm", path: path)
        }
        guard format >= 1 else { throw StorageError(.invalidDatabase, "the file has format version 0", path: path) }
        let pageSize = header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self)) }
        guard pageSize == FileHeader.pageSize else {
            throw StorageError(.fileCorrupted, "the header names page size \(pageSize)", path: path)
        }

        let mapping = try file.map(length: reservation(for: size, minimum: minimumMapping))
        let check = format >= FileHeader.nodeChecksumFormat ? mapping.verified.check(enabled: true, sealing: sealing) : .never
        var slots: [(index: Int, slot: RootSlot)] = []
        for index in 0..<2 {
            let offset = FileHeader.slotOffsets[index]
            let slotSize = FileHeader.slotSize(sealed: sealing.storesSeals)
            if let slot = header.withUnsafeBytes({ RootSlot.decode(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + slotSize)]),
                                                                   sealed: sealing.storesSeals) }) {
                slots.append((index, slot))
            }
        }
        // Every version the file names: each slot's, and the chain after it (format 2).
        var roots: [(root: RootSlot, slotIndex: Int, head: (version: UInt64, slotIndex: Int))] = []
        for (index, slot) in slots {
            roots.append((slot, index, (slot.version.value, index)))
            for root in chain(after: slot, file: file, limit: min(size, UInt64(mapping.length)), sealing: check.sealing) {
                roots.append((root, -1, (slot.version.value, index)))
            }
        }
        // Newest first; a version both in a slot and in the other slot's chain, as its slot.
        roots.sort { ($0.root.version, $0.slotIndex) > ($1.root.version, $1.slotIndex) }
        var reasons: [String] = []
        var refusedSlot: Int?
        for candidate in roots {
            let name = candidate.slotIndex >= 0 ? "slot \(candidate.slotIndex)" : "the run header at \(candidate.root.runHeader.offset)"
            let depth: UInt32
            do throws(StorageError) {
                depth = try verifyCommit(candidate.root, mapping: mapping, physicalSize: size, check: check, extents: checkExtents)
            } catch {
                reasons.append("\(name) (\(candidate.root.version)): \(error.message)")
                if candidate.slotIndex >= 0 { refusedSlot = candidate.slotIndex }
                continue
            }
            do throws(StorageError) {
                let top = try decodeTop(of: candidate.root, mapping: mapping, check: check)
                let free = try decodeFreeSpace(of: candidate.root, mapping: mapping, check: check)
                let version = candidate.root.version.value
                // The bitmap was empty when the mapping was made: it accounts for the file as it
                // is now (VerifiedNodes.swift).
                mapping.verified.begin(at: candidate.root)
                let next = candidate.root.nextRun
                let refusedRunHeader = next != 0 && RunHeader.read(at: next, from: file, limit: min(size, UInt64(mapping.length)), sealing: check.sealing)
                    .map { $0.root.version.value > version } == true ? next : nil
                return Result(slot: candidate.root, slotIndex: candidate.slotIndex, top: top, free: free, mapping: mapping,
                              physicalSize: size, refusedSlot: refusedSlot, refusedRunHeader: refusedRunHeader,
                              coveredFrom: version - min(UInt64(depth), version), head: candidate.head, format: format)
            } catch {
                throw StorageError(.fileCorrupted, error.message, path: path)
            }
        }
        let detail = reasons.isEmpty ? "neither root slot holds a valid version" : reasons.joined(separator: "; ")
        throw StorageError(.fileCorrupted, "no committed version verifies: \(detail)", path: path)
    }

    /// The roots of the versions that follow `head` through run headers, in order, as far as
    /// each names the next and links to it (FileHeader.swift, invariant 4); their commits are
    /// not checked here. `limit`: the mapped bytes that hold file data.
    static func chain(after head: RootSlot, base: UnsafeRawPointer, limit: UInt64, sealing: NodeSealing = .checksum) -> [RootSlot] {
        chain(after: head) { RunHeader.decode(at: $0, base: base, limit: limit, sealing: sealing) }
    }

    /// The same walk through `file`'s reads (pread), never its mapping: the run headers of
    /// versions nobody pins may lie in a tail another process cuts off meanwhile (online
    /// shrinking, OnlineShrink.swift point 5), where a mapped read would be a SIGBUS.
    static func chain(after head: RootSlot, file: StorageFile, limit: UInt64, sealing: NodeSealing) -> [RootSlot] {
        chain(after: head) { RunHeader.read(at: $0, from: file, limit: limit, sealing: sealing) }
    }

    private static func chain(after head: RootSlot, header decode: (UInt64) -> RunHeader?) -> [RootSlot] {
        var roots: [RootSlot] = []
        var previous = head
        // Versions rise by one at each step, so the walk ends; the file's size bounds it.
        while previous.nextRun != 0, let header = decode(previous.nextRun),
              header.root.version.value == previous.version.value + 1, header.link == previous.commitRecordChecksum {
            roots.append(header.root)
            previous = header.root
        }
        return roots
    }

    /// Address space to reserve for a file of `size` bytes: room to grow without remapping.
    static func reservation(for size: UInt64, minimum: Int = 1 << 30) -> Int {
        var length = minimum
        while UInt64(length) < size * 2 { length *= 2 }
        return length
    }

    /// The top node of the version `slot` names (also for versions other processes wrote).
    static func decodeTop(of slot: RootSlot, mapping: Mapping, check: NodeCheck) throws(StorageError) -> TopState {
        let top = try TopState.decode(try NodeView(ref: slot.topRef, mapping: mapping.base, limit: slot.logicalSize, expecting: .top, check: check))
        guard top.version == slot.version else {
            throw StorageError(.fileCorrupted, "top node of \(slot.version) claims \(top.version)")
        }
        return top
    }

    /// The free list of the version `slot` names.
    static func decodeFreeSpace(of slot: RootSlot, mapping: Mapping, check: NodeCheck) throws(StorageError) -> FreeSpace {
        try FreeSpace.decode(head: slot.freeListRef, mapping: mapping.base, logicalSize: slot.logicalSize, check: check)
    }

    /// How many versions back the commit record of `slot` reaches, without checking its extents
    /// (for a version another process wrote and made durable: Store+Process.swift).
    static func recordDepth(_ slot: RootSlot, mapping: Mapping, check: NodeCheck) throws(StorageError) -> UInt32 {
        let record = try NodeView(ref: slot.commitRecordRef, mapping: mapping.base, limit: slot.logicalSize, expecting: .commitRecord, check: check)
        var r = record.reader()
        _ = try r.count(elementSize: 24)
        return try r.u32()
    }

    /// Checks that everything the commit of `slot` wrote reached the disk intact; returns the
    /// record's group depth (how many versions back its extents reach; 0 for one commit).
    @discardableResult
    static func verifyCommit(_ slot: RootSlot, mapping: Mapping, physicalSize: UInt64, check: NodeCheck, extents: Bool = true) throws(StorageError) -> UInt32 {
        let limit = slot.logicalSize
        guard limit >= UInt64(FileHeader.size), limit <= physicalSize, limit <= UInt64(mapping.length) else {
            throw StorageError(.fileCorrupted, "its size \(limit) exceeds the file (\(physicalSize) bytes)")
        }
        let record = try NodeView(ref: slot.commitRecordRef, mapping: mapping.base, limit: limit, expecting: .commitRecord, check: check)
        guard Checksum.of(UnsafeRawBufferPointer(start: record.base, count: record.length)) == slot.commitRecordChecksum else {
            throw StorageError(.fileCorrupted, "its commit record does not match its checksum")
        }
        var r = record.reader()
        let count = try r.count(elementSize: 24)
        let depth = try r.u32()
        if record.flags & CommitWriter.historyNonceFlag != 0 { _ = try r.u64() }
        let lanes = record.flags & CommitWriter.laneChecksumsFlag != 0
        for _ in 0..<(extents ? count : 0) {
            let offset = try r.u64(), length = try r.u64(), sum = try r.u64()
            guard offset >= UInt64(FileHeader.size), length <= limit, offset <= limit - length else {
                throw StorageError(.fileCorrupted, "its commit record lists an extent outside the file")
            }
            let extent = UnsafeRawBufferPointer(start: mapping.base + Int(offset), count: Int(length))
            guard (lanes ? Checksum.lanes(extent) : Checksum.of(extent)) == sum else {
                throw StorageError(.fileCorrupted, "the data it wrote at \(offset) did not reach the disk intact")
            }
        }
        return depth
    }
}
