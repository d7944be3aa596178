import CLZ4

/// Writes LZ4-compressed copies (CompressedFormat.swift).
enum CompressedWriter {
    /// Writes `copy` (a compacted copy, CompactCopy.swift) into the empty `file` as an
    /// LZ4-compressed copy with blocks of `blockSize` bytes, and syncs it.
    ///
    /// The logical image is first laid out in memory exactly as an uncompressed copy's file
    /// (`CopyFile.fill`), so that what a reader decompresses is that file byte for byte; then
    /// each block is compressed on its own and written after the table, whose size the block
    /// count fixes, and the header and table last, before the one sync.
    static func write(_ copy: CommitWriter.Prepared, to file: StorageFile, blockSize: Int = CompressedFormat.defaultBlockSize) throws(StorageError) {
        let image = try MemoryFile(name: file.path)
        try CopyFile.fill(image, with: copy, sync: false)
        let logicalSize = try image.size()
        let count = Int((logicalSize + UInt64(blockSize) - 1) / UInt64(blockSize))
        var layout = CompressedLayout(blockSize: blockSize, logicalSize: logicalSize, nonce: UInt64.random(in: .min ... .max), blocks: [])
        layout.blocks.reserveCapacity(count)
        let bound = Int(LZ4_compressBound(Int32(blockSize)))
        var source = [UInt8](repeating: 0, count: blockSize)
        var packed = [UInt8](repeating: 0, count: bound)
        var offset = UInt64(CompressedFormat.headerSize + count * CompressedFormat.entrySize)
        for index in 0..<count {
            let logical = layout.logicalLength(of: index)
            let read = try source.withUnsafeMutableBytes { buffer in
                Result { () throws(StorageError) in
                    try image.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<logical]), at: UInt64(index) * UInt64(blockSize))
                }
            }.get()
            guard read == logical else { throw StorageError(.ioFailure, "the image of the copy is shorter than its size", path: file.path) }
            let n = source.withUnsafeBytes { src in
                packed.withUnsafeMutableBytes { dst in
                    LZ4_compress_default(src.baseAddress!.assumingMemoryBound(to: CChar.self), dst.baseAddress!.assumingMemoryBound(to: CChar.self),
                                         Int32(logical), Int32(bound))
                }
            }
            // Stored as it is when LZ4 does not shrink it (or fails, which it cannot with
            // room for its bound).
            let stored = n <= 0 || Int(n) >= logical
            let bytes = stored ? Array(source[0..<logical]) : Array(packed[0..<Int(n)])
            let checksum = bytes.withUnsafeBytes { CompressedFormat.blockChecksum(nonce: layout.nonce, index: index, offset: UInt64(index) * UInt64(blockSize), $0) }
            try file.write(bytes, at: offset)
            layout.blocks.append(CompressedBlock(offset: offset, length: UInt32(bytes.count), flags: stored ? CompressedFormat.storedFlag : 0,
                                                 checksum: checksum))
            offset += UInt64(bytes.count)
        }
        try file.write(layout.encoded(), at: 0)
        try file.sync()
    }
}
