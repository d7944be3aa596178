import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// An encrypted file many times larger than its budget of decrypted pages opens, reads,
/// writes and verifies with never more than that budget resident (issue 29, point 5;
/// File/EncryptedFile.swift, File/FaultRegion.swift), and reopens the same.
@Suite struct EncryptedBoundedMemoryTests {
    static let budget = 128 << 10
    static let rows = 12_000

    static func options() -> StoreOptions {
        var options = StoreOptions(durability: .unsafe)
        options.encryptionKey = SealingMode.encryptionKey
        options.encryptedCacheSize = budget
        return options
    }

    static func payload(_ i: Int, round: Int) -> String { "row \(i) of round \(round): " + String(repeating: "abcdefghij", count: 20) }

    /// Every row read back, by scan and by key, with the round it was last written in.
    static func check(_ store: Store, table: TableKey, rounds: [Int]) throws {
        let read = store.beginRead()
        var seen = 0
        try read.table(table).forEachRow { (row) throws(StorageError) -> Bool in
            guard case .int(let i) = try row.value(ColumnKey(0)), case .string(let s) = try row.value(ColumnKey(1)) else {
                Issue.record("a row without its values")
                return false
            }
            #expect(s == payload(Int(i), round: rounds[Int(i)]), "row \(i)")
            seen += 1
            return true
        }
        #expect(seen == rows)
        for i in stride(from: 0, to: rows, by: 997) {
            #expect(try read.table(table).value(ObjectKey(Int64(i)), ColumnKey(1)) == .string(payload(i, round: rounds[i])))
        }
        _ = try read.verify()
    }

    @Test func aFileManyTimesItsBudgetOpensReadsAndWritesWithinIt() throws {
        let dir = TemporaryDirectory()
        var rounds = [Int](repeating: 0, count: Self.rows)
        let table: TableKey
        do {
            let store = try Store.open(path: dir.path(), options: Self.options())
            let counts = (store.file as? EncryptedFile)?.counts
            try #require(counts?.onDemand == true, "userfaultfd refused here: \(counts?.fallbackReason ?? "not an encrypted file")")
            let setup = try store.beginWrite()
            table = try setup.createTable("Row", columns: [ColumnSpec(name: "i", type: .int), ColumnSpec(name: "text", type: .string)])
            try setup.commit()
            for batch in stride(from: 0, to: Self.rows, by: 1_000) {
                let tx = try store.beginWrite()
                for i in batch..<(batch + 1_000) { try tx.insert(table, key: ObjectKey(Int64(i)), values: [.int(Int64(i)), .string(Self.payload(i, round: 0))]) }
                try tx.commit()
            }
            try Self.check(store, table: table, rounds: rounds)
            // Updates scattered over the file, each commit rewriting leaves all over it.
            var random = SeededRandom(seed: 29)
            for round in 1...20 {
                let tx = try store.beginWrite()
                for _ in 0..<50 {
                    let i = Int.random(in: 0..<Self.rows, using: &random)
                    try tx.set(table, ObjectKey(Int64(i)), ColumnKey(1), .string(Self.payload(i, round: round)))
                    rounds[i] = round
                }
                try tx.commit()
            }
            try Self.check(store, table: table, rounds: rounds)
            let size = try store.file.size()
            let after = try #require((store.file as? EncryptedFile)?.counts)
            #expect(size > 10 * UInt64(Self.budget), "the file is \(size) bytes")
            #expect(after.budget == Self.budget / EncryptedPageSource.unitSize)
            #expect(after.peakResident <= after.budget)
            #expect(after.installs > Int(size) / EncryptedPageSource.unitSize, "pages were decrypted again after being dropped")
        }
        let again = try Store.open(path: dir.path(), options: Self.options())
        try Self.check(again, table: table, rounds: rounds)
        #expect(try #require((again.file as? EncryptedFile)?.counts).peakResident <= Self.budget / EncryptedPageSource.unitSize)
    }
}
