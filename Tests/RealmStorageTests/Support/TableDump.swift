import Foundation
@testable import RealmStorage
import TestSupport

extension ReplayableRandom {
    /// True with probability `p` (0...1).
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// The seed for a test: from the environment variable, or a fresh one.
    static func seed(_ variable: String) -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[variable], let value = UInt64(text) { return value }
        return UInt64.random(in: 1...UInt64.max)
    }
}

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
