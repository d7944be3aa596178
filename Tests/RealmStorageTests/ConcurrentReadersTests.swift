import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Readers on other threads never wait for the writer and always see a whole version: while
/// one thread commits transfers between accounts, reader threads pin snapshots and sum every
/// balance; every snapshot must hold the same total, and verify. On a plain file, and on an
/// encrypted one, whose image the writer writes through while the readers read it
/// (EncryptedFile.swift), and one whose image keeps four 16 KiB units at a time, so that the
/// readers' faults, the writer's writes and the drops all meet (FaultRegion.swift).
@Suite struct ConcurrentReadersTests {
    @Test(arguments: ["plain", "encrypted", "encrypted, 64 KiB of decrypted pages"])
    func snapshotsStayConsistentWhileTheWriterCommits(file: String) async throws {
        let dir = TemporaryDirectory()
        var options = StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 16, innerCapacity: 8))
        if file != "plain" { options.encryptionKey = SealingMode.encryptionKey }
        if file.hasSuffix("pages") { options.encryptedCacheSize = 64 << 10 }
        let store = try Store.open(path: dir.path(), options: options)
        let accounts = 500
        let table: TableKey = try {
            let tx = try store.beginWrite()
            let table = try tx.createTable("Account", columns: [ColumnSpec(name: "balance", type: .int), ColumnSpec(name: "owner", type: .string, indexed: true)])
            for i in 0..<accounts { try tx.insert(table, values: [.int(100), .string("owner \(i % 37)")]) }
            try tx.commit()
            return table
        }()
        let total = Int64(accounts * 100)
        let commits = 300

        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                var random = SeededRandom(seed: 99)
                for _ in 0..<commits {
                    let tx = try store.beginWrite()
                    for _ in 0..<5 {
                        let from = ObjectKey(Int64.random(in: 0..<Int64(accounts), using: &random))
                        let to = ObjectKey(Int64.random(in: 0..<Int64(accounts), using: &random))
                        let amount = Int64.random(in: 1...20, using: &random)
                        guard case .int(let a) = try tx.table(table).value(from, ColumnKey(0)) else { continue }
                        try tx.set(table, from, ColumnKey(0), .int(a - amount))
                        guard case .int(let b) = try tx.table(table).value(to, ColumnKey(0)) else { continue }
                        try tx.set(table, to, ColumnKey(0), .int(b + amount))
                    }
                    if Bool.random(using: &random) { try tx.commit() } else { tx.rollback() }
                }
                return 0
            }
            for _ in 0..<3 {
                group.addTask {
                    var snapshots = 0
                    while store.latestVersion.value < UInt64(commits / 2) || snapshots < 50 {
                        let read = store.beginRead()
                        var sum: Int64 = 0
                        try read.table(table).forEachRow { (row) throws(StorageError) -> Bool in
                            if case .int(let b) = try row.value(ColumnKey(0)) { sum += b }
                            return true
                        }
                        #expect(sum == total, "snapshot \(read.version) sums to \(sum)")
                        if snapshots % 25 == 0 { _ = try read.verify() }
                        snapshots += 1
                        if snapshots > 5_000 { break }
                    }
                    return snapshots
                }
            }
            for try await _ in group {}
        }
        try store.verify()
        #expect(store.activeVersionCount == 0)
    }
}
