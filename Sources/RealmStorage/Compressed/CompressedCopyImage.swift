import CLZ4

/// Writes an LZ4-compressed copy (CompressedFormat.swift) as the copy's image streams in
/// (Copy/CopyWriter.swift): each block is compressed and written once it is whole, so memory
/// holds two blocks whatever the size of the realm. Block 0 starts with the file header, which
/// is known only at the end: it is kept and goes last, after the other blocks and before the
/// table (format 2). The header and table of the compressed file are written last, then the
/// one sync. With `keys`, each block is compressed, then padded, encrypted and tagged
/// (format 3).
final class CompressedCopyImage: CopyImage {
    private let file: StorageFile
    private let blockSize: Int
    private let keys: CompressedCopyKeys?
    private let nonce = UInt64.random(in: .min ... .max)
    /// Block 0 and the block being filled.
    private var first: [UInt8]
    private var current: [UInt8]
    /// The index of the block `current` fills (0 while the image is within block 0).
    private var currentIndex = 0
    private var entries: [CompressedBlock] = []
    /// Where the next stored block goes.
    private var stored: UInt64
    private var packed: [UInt8]

    init(_ file: StorageFile, blockSize: Int = CompressedFormat.defaultBlockSize, keys: CompressedCopyKeys? = nil) {
        self.file = file
        self.blockSize = blockSize
        self.keys = keys
        stored = UInt64(keys == nil ? CompressedFormat.headerSize : CompressedFormat.encryptedHeaderSize)
        first = []
        first.reserveCapacity(blockSize)
        first.append(contentsOf: repeatElement(0, count: FileHeader.size))
        current = []
        current.reserveCapacity(blockSize)
        packed = [UInt8](repeating: 0, count: Int(LZ4_compressBound(Int32(blockSize))))
        if first.count == blockSize { currentIndex = 1 }
        // The table entry of block 0 is filled in at the end.
        entries.append(CompressedBlock(offset: 0, length: 0, flags: 0, checksum: 0))
    }

    func append(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        precondition(offset == UInt64(currentIndex * blockSize + (currentIndex == 0 ? first.count : current.count)),
                     "a copy's image arrives in order")
        var rest = bytes
        while !rest.isEmpty {
            if currentIndex == 0 {
                let n = min(rest.count, blockSize - first.count)
                first.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<n]))
                rest = UnsafeRawBufferPointer(rebasing: rest[n...])
                if first.count == blockSize { currentIndex = 1 }
            } else {
                let n = min(rest.count, blockSize - current.count)
                current.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[..<n]))
                rest = UnsafeRawBufferPointer(rebasing: rest[n...])
                if current.count == blockSize {
                    try store(current, index: currentIndex)
                    current.removeAll(keepingCapacity: true)
                    currentIndex += 1
                }
            }
        }
    }

    func finish(header: [UInt8], size: UInt64) throws(StorageError) {
        precondition(header.count == FileHeader.size && size == UInt64(currentIndex * blockSize + (currentIndex == 0 ? first.count : current.count)),
                     "the image's size is what it was given")
        if currentIndex > 0, !current.isEmpty { try store(current, index: currentIndex) }
        first.replaceSubrange(0..<FileHeader.size, with: header)
        try store(first, index: 0)
        let layout = CompressedLayout(blockSize: blockSize, logicalSize: size, nonce: nonce, blocks: entries, encrypted: keys != nil)
        let tableOffset = stored
        try file.write(layout.encodedTable(), at: tableOffset)
        try file.write(layout.encodedHeader(tableOffset: tableOffset, keys: keys), at: 0)
        try file.sync()
    }

    /// Compresses block `index` (its logical bytes `block`), writes it where the next stored
    /// block goes and records it in the table.
    private func store(_ block: [UInt8], index: Int) throws(StorageError) {
        let bound = packed.count
        let n = block.withUnsafeBytes { src in
            packed.withUnsafeMutableBytes { dst in
                LZ4_compress_default(src.baseAddress!.assumingMemoryBound(to: CChar.self), dst.baseAddress!.assumingMemoryBound(to: CChar.self),
                                     Int32(block.count), Int32(bound))
            }
        }
        // Stored as it is when LZ4 does not shrink it (or fails, which it cannot with room for
        // its bound).
        let raw = n <= 0 || Int(n) >= block.count
        var bytes = raw ? block : Array(packed[0..<Int(n)])
        var entry = CompressedBlock(offset: stored, length: UInt32(bytes.count), flags: raw ? CompressedFormat.storedFlag : 0, checksum: 0)
        if let keys {
            // Compress, then encrypt: padded to the cipher's blocks, one XTS unit per block.
            bytes += repeatElement(0, count: CompressedCopyKeys.padded(bytes.count) - bytes.count)
            entry.tag = bytes.withUnsafeMutableBytes { ciphertext in
                keys.keys.pages.encrypt(unit: UInt64(index), ciphertext)
                return keys.blockTag(index: index, length: entry.length, flags: entry.flags, ciphertext: UnsafeRawBufferPointer(ciphertext))
            }
        } else {
            entry.checksum = bytes.withUnsafeBytes {
                CompressedFormat.blockChecksum(nonce: nonce, index: index, offset: UInt64(index) * UInt64(blockSize), $0)
            }
        }
        try file.write(bytes, at: stored)
        stored += UInt64(bytes.count)
        if index == 0 { entries[0] = entry } else { entries.append(entry) }
    }
}
