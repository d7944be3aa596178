// The workloads, one implementation per engine behind one protocol, so that the harness
// target and the side-by-side runner measure exactly the same code.

import Foundation

/// One engine under test. Each instance owns one database file in its own directory.
public protocol BenchmarkEngine: AnyObject {
    static var name: String { get }
    /// Opens (creates) the database with the benchmark table in `directory`.
    init(directory: String) throws
    /// Inserts `rows` in transactions of `batchSize` rows, each committed durably.
    func insert(_ rows: ArraySlice<BenchmarkRow>, batchSize: Int) throws
    /// Looks up every key (an id) and reads every column of the row.
    func lookup(_ keys: [Int64]) throws -> LookupChecksum
    /// Number of rows in the table.
    func count() throws -> Int
    /// Closes the database (the directory is removed by the caller).
    func close() throws
}

/// A fresh directory under the system's temporary directory, removed by `remove()`.
public struct ScratchDirectory: Sendable {
    public let path: String

    public init(prefix: String) throws {
        var template = Array((NSTemporaryDirectory() + "/\(prefix)-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "mkdtemp failed: errno \(errno)"])
        }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
