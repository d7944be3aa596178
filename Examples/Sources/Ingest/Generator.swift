import Foundation

/// Writes a sample input: `rows` readings, one JSON object a line.
enum Generator {
    static func write(rows: Int, to path: String) throws {
        // Written beside the target and renamed at the end, so that an interrupted generation
        // never leaves a short file that a later run would take as the whole input.
        let partial = path + ".partial"
        guard FileManager.default.createFile(atPath: partial, contents: nil) else {
            throw IngestError("cannot create \(partial)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: partial))
        var chunk = ""
        // A fixed generator, so that every run (and every machine) makes the same file.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for id in 1...rows {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407  // wrapping: an LCG step
            let value = Double(state >> 40) / Double(1 << 24) * 100
            chunk += #"{"id":\#(id),"sensor":"sensor-\#(id % 64)","time":\#(1_700_000_000 + id),"value":\#(value)}"#
            chunk += "\n"
            if chunk.utf8.count > 1 << 20 {
                try handle.write(contentsOf: Data(chunk.utf8))
                chunk = ""
            }
        }
        try handle.write(contentsOf: Data(chunk.utf8))
        try handle.close()
        try FileManager.default.moveItem(atPath: partial, toPath: path)
    }
}
