/// A small deterministic generator (SplitMix64) so that a failing run can be replayed from
/// its printed seed.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        // Wrapping arithmetic is the algorithm.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// The seed for a test: from the environment variable, or a fresh one.
    static func seed(_ variable: String) -> UInt64 {
        if let text = ProcessInfoLite.environment(variable), let value = UInt64(text) { return value }
        return UInt64.random(in: 1...UInt64.max)
    }
}

import Foundation

enum ProcessInfoLite {
    static func environment(_ name: String) -> String? { ProcessInfo.processInfo.environment[name] }
}

@testable import RealmStorage

/// A table's contents as plain values: key → (value columns, list columns).
struct TableDump: Equatable, CustomStringConvertible {
    var rows: [Int64: [Value]] = [:]
    var lists: [Int64: [Int: [Value]]] = [:]

    init() {}

    init(_ view: TableView) throws {
        try view.forEachRow { (row) throws(StorageError) -> Bool in
            rows[row.key.value] = try row.values()
            var rowLists: [Int: [Value]] = [:]
            for (c, spec) in view.info.columns.enumerated() where spec.isList && !spec.removed {
                let elements = try row.list(ColumnKey(c))
                if !elements.isEmpty { rowLists[c] = elements }
            }
            if !rowLists.isEmpty { lists[row.key.value] = rowLists }
            return true
        }
    }

    var description: String { "\(rows.count) rows, \(lists.count) with lists" }
}
