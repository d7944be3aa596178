import Foundation

/// Reads a file's lines from a byte offset, in chunks, keeping each line's end offset so that
/// a batch can record exactly where it stopped.
struct LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// Where in `buffer` the next line starts.
    private var start = 0
    /// The file offset of `buffer[0]`.
    private var bufferOffset: Int
    private var atEnd = false
    private let chunkSize: Int

    /// The file offset just past the last line returned.
    var offset: Int { bufferOffset + start }

    init(path: String, offset: Int, chunkSize: Int = 1 << 20) throws {
        handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(offset))
        bufferOffset = offset
        self.chunkSize = chunkSize
    }

    /// The next line without its newline, or nil at the end of the file. A last line without
    /// a newline is returned too.
    mutating func next() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                return line
            }
            // Keep the partial line, drop what was returned.
            buffer.removeSubrange(0..<start)
            bufferOffset += start
            start = 0
            let chunk = try handle.read(upToCount: chunkSize) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}
