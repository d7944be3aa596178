import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Real processes killed with SIGKILL in the middle of commits. Each round a child process
/// (a Swift Testing exit test) opens the file, commits batches of numbered objects in a loop
/// and is killed at a random instant; the parent then reopens the file, which must verify and
/// hold exactly the first k batches for some k, never fewer than before the round. The rounds
/// run on a plain file and on an encrypted one.
@Suite(.childProcesses) struct KillTests {
    static let seed: UInt64 = 0x4B11_7E57_0001
    static let rounds = 40
    static let batch = 25
    static let tableName = "Numbered"

    static let columns: [ColumnSpec] = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "check", type: .int),
        ColumnSpec(name: "payload", type: .string),
        ColumnSpec(name: "bucket", type: .int, indexed: true),
        ColumnSpec(name: "any", type: .mixed, indexed: true),
    ]

    /// The values of object `id`: the check column and payload are functions of the id, so a
    /// torn or misplaced object shows.
    static func values(_ id: Int64) -> [Value] {
        var mix = ReplayableRandom(seed: UInt64(id))
        let check = Int64(bitPattern: mix.next())
        let mixed: Value = switch id % 4 {
        case 0: .string("mixed \(id)")
        case 1: .int(check)
        case 2: .decimal(Bytes16(a: UInt64(id), b: 0x3040_0000_0000_0000))
        default: .null
        }
        return [.int(id), .int(check), .string("object \(id) " + String(repeating: "x", count: Int(id % 97))), .int(id % 13), mixed]
    }

    /// The child: commits batches until killed. `killAfterFirstCommit` starts the killer once
    /// a commit has landed (so every such round makes progress); otherwise it starts before the
    /// file is opened, so some kills land in `open` too.
    static func commitUntilKilled(path: String, seed: UInt64, durability: Durability, killAfterFirstCommit: Bool,
                                  key: [UInt8]? = nil, encryptedCacheSize: Int? = nil) throws {
        var random = ReplayableRandom(seed: seed)
        let delay = UInt32(random.below(killAfterFirstCommit ? 20_000 : 30_000))
        func startKiller() {
            Thread.detachNewThread {
                usleep(delay)
                kill(getpid(), SIGKILL)
            }
        }
        if !killAfterFirstCommit { startKiller() }
        var options = StoreOptions(durability: durability, limits: TreeLimits(leafCapacity: 8, innerCapacity: 4))
        // Every commit of more than one leaf encodes on two threads (LeafPreEncoding.swift), so
        // kills land in that hand-over too.
        options.parallelEncodingLeaves = 2
        options.encryptionKey = key
        if let encryptedCacheSize { options.encryptedCacheSize = encryptedCacheSize }
        let store = try Store.open(path: path, options: options)
        var committed = 0
        while true {
            let transaction = try store.beginWrite()
            let table = try transaction.table(named: tableName)?.key ?? transaction.createTable(tableName, columns: columns)
            let first = try transaction.table(table).count()
            for id in first..<(first + batch) {
                try transaction.insert(table, key: ObjectKey(Int64(id)), values: values(Int64(id)))
            }
            try transaction.commit()
            committed += 1
            if committed == 1 && killAfterFirstCommit { startKiller() }
            if committed > 100_000 { kill(getpid(), SIGKILL) }
        }
    }

    /// Opens the file in this process and checks it holds exactly `0 ..< k * batch`; returns
    /// the number of objects.
    static func checkCommittedPrefix(path: String, context: String, key: [UInt8]? = nil, encryptedCacheSize: Int? = nil) throws -> Int {
        // A child killed in its first `open`, before it created the file, leaves none.
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        var options = StoreOptions(create: false)
        options.encryptionKey = key
        if let encryptedCacheSize { options.encryptedCacheSize = encryptedCacheSize }
        let store = try Store.open(path: path, options: options)
        // A fresh process view: every node the killed children wrote verifies its checksum.
        #expect(store.verifiesNodes, "\(context)")
        try store.verify()
        let read = store.beginRead()
        guard let view = try read.table(named: tableName) else { return 0 }
        let keys = try view.keys()
        #expect(keys.count % batch == 0, "\(keys.count) objects is not a whole number of batches; \(context)")
        #expect(keys == (0..<keys.count).map { ObjectKey(Int64($0)) }, "the objects are not 0..<\(keys.count); \(context)")
        var wrong = 0
        try view.forEachRow { (row) throws(StorageError) -> Bool in
            if try row.values() != values(row.key.value) { wrong += 1 }
            return true
        }
        #expect(wrong == 0, "\(wrong) objects hold values that do not match their ids; \(context)")
        for id in [0, keys.count / 2, keys.count - 1] where id >= 0 && !keys.isEmpty {
            #expect(try view.indexLookup(ColumnKey(0), .int(Int64(id))) == [ObjectKey(Int64(id))], "index lookup of \(id); \(context)")
        }
        return keys.count
    }

    /// The key of the encrypted rounds: the same kills on a file whose pages are ciphertext,
    /// torn ones included (EncryptedFile.swift).
    static let key: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 53 &+ 17) }

    @Test(arguments: [false, true])
    func committedBatchesSurviveSIGKILL(encrypted: Bool) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let key = encrypted ? Self.key : nil
        var objects = 0
        let rounds = encrypted ? Self.rounds / 2 : Self.rounds
        for round in 0..<rounds {
            let roundSeed = ReplayableRandom.derive(Self.seed, round)
            let durability: Durability = round % 3 == 2 ? .unsafe : .full
            let killAfterFirstCommit = round % 2 == 1
            await #expect(processExitsWith: .signal(SIGKILL), "round \(round), seed \(roundSeed)") {
                [path = path as String, roundSeed = roundSeed as UInt64, unsafe = (durability == .unsafe) as Bool,
                 killAfterFirstCommit = killAfterFirstCommit as Bool, key = key as [UInt8]?] in
                try KillTests.commitUntilKilled(path: path, seed: roundSeed, durability: unsafe ? .unsafe : .full,
                                                killAfterFirstCommit: killAfterFirstCommit, key: key)
            }
            let context = "round \(round), seed \(roundSeed), suite seed \(Self.seed)"
            // The killed child held the lock; it must not keep anyone out now.
            if round > 0 || killAfterFirstCommit {
                #expect(FileManager.default.fileExists(atPath: path + ".lock"), "\(context)")
            }
            let now = try Self.checkCommittedPrefix(path: path, context: context, key: key)
            #expect(now >= objects, "acknowledged batches were lost: \(objects) before, \(now) after; \(context)")
            if killAfterFirstCommit {
                #expect(now >= objects + Self.batch, "the child committed at least one batch; \(context)")
            }
            objects = now
        }
        #expect(objects >= Self.batch * rounds / 2)
        if encrypted {
            let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(!containsRun(raw[EncryptionHeader.plaintextLength...], Array("object 1 x".utf8)))
        }
    }
}
