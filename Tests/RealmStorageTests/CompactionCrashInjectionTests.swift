import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Compaction stopped at every step: each write and size change of the new file failing, a
/// power cut at its sync (with every post-crash image of its unsynced writes), and a crash
/// before each change to the folder (the rename, the folder's sync). Whatever the instant, the
/// file at the realm's path must be the old file or the new one, whole, with the same data,
/// and a later compaction must succeed. Every test runs on a plain and on an encrypted file
/// (whose compaction writes an encrypted copy under a new salt, the crash layer under the
/// cipher: its tears and losses hit the ciphertext).
@Suite struct CompactionCrashInjectionTests {
    static let seed: UInt64 = 0xC0_4AC7_0001
    static let key: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 41 &+ 3) }

    /// A file holding the whole crash workload (small trees, lists, indexes, deletes): its
    /// bytes and what it holds.
    struct Original {
        var bytes: Data
        var dump: DatabaseDump
    }

    static let plainOriginal = makeOriginal(encrypted: false)
    static let encryptedOriginal = makeOriginal(encrypted: true)

    static func original(_ encrypted: Bool) -> Original { encrypted ? encryptedOriginal : plainOriginal }

    static func makeOriginal(encrypted: Bool) -> Original {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let store = try Store.open(path: path, options: options(CopyHooks(), encrypted: encrypted))
            for step in CrashWorkload.steps.indices { try CrashWorkload.commit(step: step, on: store) }
            let dump = try DatabaseDump(store.beginRead())
            return Original(bytes: try Data(contentsOf: URL(fileURLWithPath: path)), dump: dump)
        } catch {
            fatalError("the crash workload failed: \(error)")
        }
    }

    /// A fresh copy of the original file at a new path of `directory`.
    static func placeOriginal(in directory: TemporaryDirectory, _ name: String, encrypted: Bool) throws -> String {
        let path = directory.path(name)
        try original(encrypted).bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    static func options(_ hooks: CopyHooks, encrypted: Bool, create: Bool = true) -> StoreOptions {
        var options = StoreOptions(create: create, limits: CrashWorkload.limits)
        options.copyHooks = hooks
        if encrypted { options.encryptionKey = key }
        return options
    }

    static func inode(_ path: String) -> UInt64? {
        var status = stat()
        return stat(path, &status) == 0 ? UInt64(status.st_ino) : nil
    }

    /// What a version holds, without its number (a compacted file starts again at version 1).
    static func content(_ dump: DatabaseDump) -> DatabaseDump {
        var dump = dump
        dump.version = 0
        return dump
    }

    /// Opens the file at `path`, verifies it and checks that it holds the original's data (and
    /// is encrypted when the original is).
    static func checkWhole(_ path: String, _ context: String, encrypted: Bool) {
        do {
            let header = try Data(contentsOf: URL(fileURLWithPath: path)).prefix(EncryptionHeader.plaintextLength)
            let kind = try EncryptionHeader.kind(of: [UInt8](header), path: path)
            #expect((kind != .plain) == encrypted, "\(context): the file's kind is \(kind)")
            let store = try Store.open(path: path, options: options(CopyHooks(), encrypted: encrypted, create: false))
            try store.verify()
            let dump = try DatabaseDump(store.beginRead())
            let expected = original(encrypted)
            #expect(content(dump) == content(expected.dump), "\(context): \(dump.differences(from: expected.dump))")
            try DatabaseDump.checkIndexes(store.beginRead())
        } catch {
            Issue.record("\(context): the file does not open whole: \(error)")
        }
    }

    /// After the stopped compaction: a later one replaces the file, and the result is whole.
    static func checkCompactsAgain(_ path: String, _ context: String, encrypted: Bool) {
        do {
            let result = try Store.compact(path: path, options: options(CopyHooks(), encrypted: encrypted))
            guard case .compacted = result else {
                Issue.record("\(context): the next compaction did not compact: \(result)")
                return
            }
            checkWhole(path, context + ", compacted again", encrypted: encrypted)
        } catch {
            Issue.record("\(context): the next compaction failed: \(error)")
        }
    }

    @Test(arguments: [false, true])
    func aCompactionWithoutFaultsKeepsEveryObjectInASmallerFile(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = try Self.placeOriginal(in: directory, "plain.realm", encrypted: encrypted)
        let result = try Store.compact(path: path, options: Self.options(CopyHooks(), encrypted: encrypted))
        guard case .compacted(let before, let after) = result else {
            Issue.record("not compacted: \(result)")
            return
        }
        #expect(after < before, "compacted from \(before) to \(after) bytes")
        #expect(UInt64(try Data(contentsOf: URL(fileURLWithPath: path)).count) < before)
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))
        Self.checkWhole(path, "compacted", encrypted: encrypted)
    }

    @Test(arguments: FaultInjectingFile.Call.allCases, [false, true])
    func everyFailingWriteSizeChangeAndSyncOfTheCopyLeavesTheOldFile(call: FaultInjectingFile.Call, encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        var failures = 0
        for n in 1... {
            let path = try Self.placeOriginal(in: directory, "fault-\(call)-\(n).realm", encrypted: encrypted)
            let box = WrappedFileBox<FaultInjectingFile>()
            let hooks = CopyHooks(fileWrapper: box.wrapper { FaultInjectingFile(wrapping: $0, failing: call, at: n, errno: EIO) })
            let context = "\(call) \(n) failing"
            do {
                _ = try Store.compact(path: path, options: Self.options(hooks, encrypted: encrypted))
                #expect(box.file?.didFail != true, "\(context): the compaction succeeded after a failure")
                break
            } catch {
                #expect(box.file?.didFail == true, "\(context): failed without the injected fault: \(error)")
                #expect(error.code == .ioFailure, "\(context): \(error)")
            }
            failures += 1
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Self.original(encrypted).bytes, "\(context): the old file changed")
            #expect(!FileManager.default.fileExists(atPath: path + ".compacting"), "\(context): the temporary file stayed")
            Self.checkWhole(path, context, encrypted: encrypted)
            Self.checkCompactsAgain(path, context, encrypted: encrypted)
            if n > 50 {
                Issue.record("the compaction still fails at \(call) \(n)")
                break
            }
        }
        // The copy grows by its writes as it streams (Copy/CopyWriter.swift): it sets no size (an
        // encrypted copy completes its last page by a write: EncryptedFile.setSize).
        #expect(call == .setSize ? failures == 0 : failures >= 1, "the compaction makes no \(call) call")
    }

    /// A power cut at the copy's sync: its unsynced writes land in any way (kept, dropped,
    /// torn, garbled). If the realm's path named the new file by then, its post-crash image
    /// would be what opens; it must not (the rename comes after the sync), so the old file is
    /// there, unchanged. A stray temporary file holding any of those images must not keep a
    /// later compaction from working.
    @Test(arguments: [false, true])
    func aPowerCutAtTheCopysSyncLeavesTheOldFile(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = try Self.placeOriginal(in: directory, "cut.realm", encrypted: encrypted)
        let oldInode = Self.inode(path)
        let box = WrappedFileBox<CrashSimulatingFile>()
        let hooks = CopyHooks(fileWrapper: box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: 1) })
        #expect(throws: StorageError.self) { try Store.compact(path: path, options: Self.options(hooks, encrypted: encrypted)) }
        let state = try #require(box.file?.crashState, "the copy must sync")
        #expect(Self.inode(path) == oldInode, "the realm's path was changed before the copy was synced")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Self.original(encrypted).bytes)
        Self.checkWhole(path, "power cut at the copy's sync", encrypted: encrypted)
        let policies: [CrashPolicy] = [.keepAll, .dropAll, .keepFirst(max(1, state.pending.count / 2))]
            + (0..<4).map { .random(seed: ReplayableRandom.derive(Self.seed, $0)) }
        for policy in policies {
            try state.image(policy).write(to: path + ".compacting")
            Self.checkWhole(path, "stray copy under \(policy)", encrypted: encrypted)
            Self.checkCompactsAgain(path, "stray copy under \(policy)", encrypted: encrypted)
            try Self.original(encrypted).bytes.write(to: URL(fileURLWithPath: path))
        }
    }

    /// A crash before each change to the folder. Before the rename: the old file. Before the
    /// folder's sync: the rename may or may not survive a power cut, so both the old file and
    /// the new one must open whole with the same data.
    @Test(arguments: [FolderStep.rename, .syncFolder], [false, true])
    func aCrashBeforeAFolderChangeLeavesTheOldOrTheNewFileWhole(step: FolderStep, encrypted: Bool) throws {
        struct Crash: Error {}
        let directory = TemporaryDirectory()
        let path = try Self.placeOriginal(in: directory, "folder.realm", encrypted: encrypted)
        let oldInode = Self.inode(path)
        let hooks = CopyHooks(beforeFolderStep: { (reached) throws(StorageError) in
            if reached == step { throw StorageError(.ioFailure, "simulated crash before \(step)") }
        })
        #expect(throws: StorageError.self) { try Store.compact(path: path, options: Self.options(hooks, encrypted: encrypted)) }
        switch step {
        case .rename:
            #expect(Self.inode(path) == oldInode)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Self.original(encrypted).bytes)
            Self.checkWhole(path, "crash before the rename", encrypted: encrypted)
        default:
            #expect(Self.inode(path) != oldInode, "the rename comes before the folder's sync")
            Self.checkWhole(path, "crash before the folder's sync, the rename kept", encrypted: encrypted)
            let lost = try Self.placeOriginal(in: directory, "rename-lost.realm", encrypted: encrypted)
            Self.checkWhole(lost, "crash before the folder's sync, the rename lost", encrypted: encrypted)
        }
        Self.checkCompactsAgain(path, "after a crash before \(step)", encrypted: encrypted)
    }
}
