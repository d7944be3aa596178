import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Copies with an encryption key (Copy/CompactCopy.swift, `CopySource.seal`): a copy is
/// encrypted under a salt of its own whatever its source is, a copy without a key is plain, and
/// a key that cannot be used is refused before anything is written.
@Suite struct EncryptedCopyTests {
    static let key: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 9) }
    static let otherKey: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 23 &+ 1) }

    static func options(key: [UInt8]?, create: Bool = true) -> StoreOptions {
        var options = StoreOptions(create: create)
        options.encryptionKey = key
        return options
    }

    /// A store at `path` holding `count` people (some with lists), encrypted with `key`.
    static func makeSource(_ path: String, key: [UInt8]?, count: Int = 400) throws -> Store {
        let store = try Store(path: path, options: options(key: key))
        let tx = try store.beginWrite()
        let table = try tx.createTable("Person", columns: Fixtures.personColumns + [ColumnSpec(name: "tags", type: .string, isList: true)])
        for id in 0..<count {
            try tx.insert(table, values: Fixtures.person(Int64(id)) + [.null])
            if id % 7 == 0 { try tx.setList(table, ObjectKey(Int64(id)), ColumnKey(5), [.string("tag\(id)"), .string("u")]) }
        }
        try tx.commit()
        return store
    }

    static func header(_ path: String) throws -> EncryptionHeader.Kind {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(EncryptionHeader.plaintextLength))
        return try EncryptionHeader.kind(of: bytes, path: path)
    }

    static func salt(_ path: String) throws -> [UInt8]? {
        if case .encrypted(let salt, _) = try header(path) { return salt }
        return nil
    }

    static func format(_ path: String) throws -> UInt32 {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(12))
        return bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self)) }
    }

    static func code(_ body: () throws -> Void) -> StorageError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? StorageError)?.code
        }
    }

    /// Opens the copy at `path` with `key`, verifies it and checks it holds what `source` holds.
    static func checkCopy(_ path: String, key: [UInt8]?, equals source: Store) throws {
        let copy = try Store(path: path, options: options(key: key, create: false))
        try copy.verify()
        #expect(try CompressedCopyTests.contents(copy.beginRead()) == CompressedCopyTests.contents(source.beginRead()))
    }

    @Test func aPlainRealmsCopyWithAKeyIsEncryptedAndOpensOnlyWithIt() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path("plain.realm"), key: nil)
        let copy = dir.path("copy.realm")
        try source.writeCompactedCopy(to: copy, encryptionKey: Self.key)
        #expect(try Self.format(copy) == EncryptionHeader.formatVersion)
        #expect(try Self.salt(copy) != nil)
        let size = try FileManager.default.attributesOfItem(atPath: copy)[.size] as! Int
        #expect(size % PageCipher.pageSize == 0, "an encrypted file is whole pages: \(size) bytes")
        let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: copy)))
        for needle in ["name123", "p124@x.org", "tag140", "Person", "tags"] {
            #expect(!containsRun(raw[EncryptionHeader.plaintextLength...], Array(needle.utf8)), "found \(needle) in the copy")
        }
        #expect(Self.code { _ = try Store(path: copy, options: Self.options(key: nil, create: false)) } == .decryptionFailed)
        #expect(Self.code { _ = try Store(path: copy, options: Self.options(key: Self.otherKey, create: false)) } == .decryptionFailed)
        try Self.checkCopy(copy, key: Self.key, equals: source)
        // It is a realm like any other: it takes commits.
        let reopened = try Store(path: copy, options: Self.options(key: Self.key, create: false))
        let tx = try reopened.beginWrite()
        try tx.insert(tx.tables[0].key, values: Fixtures.person(10_000) + [.null])
        try tx.commit()
        try reopened.verify()
    }

    @Test func anEncryptedRealmsCopyWithAnotherKeyIsReKeyed() throws {
        let dir = TemporaryDirectory()
        let sourcePath = dir.path("source.realm")
        let source = try Self.makeSource(sourcePath, key: Self.key)
        let copy = dir.path("rekeyed.realm")
        try source.writeCompactedCopy(to: copy, encryptionKey: Self.otherKey)
        #expect(try Self.salt(copy) != Self.salt(sourcePath))
        #expect(Self.code { _ = try Store(path: copy, options: Self.options(key: Self.key, create: false)) } == .decryptionFailed)
        try Self.checkCopy(copy, key: Self.otherKey, equals: source)
    }

    @Test func anEncryptedRealmsCopyWithoutAKeyIsPlainWithChecksums() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path("source.realm"), key: Self.key)
        let copy = dir.path("plain.realm")
        try source.writeCompactedCopy(to: copy)
        #expect(try Self.header(copy) == .plain)
        #expect(try Self.format(copy) == FileHeader.formatVersion)
        #expect(Self.code { _ = try Store(path: copy, options: Self.options(key: Self.key, create: false)) } == .decryptionFailed)
        try Self.checkCopy(copy, key: nil, equals: source)
    }

    @Test func twoCopiesUnderOneKeyHaveTheirOwnSaltsAndCiphertext() throws {
        let dir = TemporaryDirectory()
        let sourcePath = dir.path("source.realm")
        let source = try Self.makeSource(sourcePath, key: Self.key)
        let paths = [dir.path("a.realm"), dir.path("b.realm")]
        for path in paths { try source.writeCompactedCopy(to: path, encryptionKey: Self.key) }
        let salts = try paths.map { try #require(try Self.salt($0)) }
        #expect(salts[0] != salts[1])
        #expect(try !salts.contains(#require(try Self.salt(sourcePath))))
        let bytes = try paths.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0))) }
        #expect(bytes[0].count == bytes[1].count)
        // Every 16-byte block past the clear header differs (equal ones would be chance).
        var equalBlocks = 0
        for block in stride(from: EncryptionHeader.plaintextLength, to: bytes[0].count, by: 16)
            where bytes[0][block..<(block + 16)] == bytes[1][block..<(block + 16)] { equalBlocks += 1 }
        #expect(equalBlocks == 0)
        for path in paths { try Self.checkCopy(path, key: Self.key, equals: source) }
    }

    @Test func aCopyInsideAWriteIsEncryptedWithItsUncommittedChanges() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path("source.realm"), key: nil, count: 50)
        let tx = try source.beginWrite()
        try tx.insert(tx.tables[0].key, values: Fixtures.person(777) + [.null])
        let copy = dir.path("copy.realm")
        try tx.writeCompactedCopy(to: copy, encryptionKey: Self.key)
        // The copy holds what the commit then makes the source hold.
        try tx.commit()
        try Self.checkCopy(copy, key: Self.key, equals: source)
    }

    @Test(arguments: [0, 32, 63, 65])
    func aKeyOfAnotherLengthIsRefusedBeforeAnythingIsWritten(length: Int) throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path("source.realm"), key: nil, count: 10)
        let copy = dir.path("copy.realm")
        let key = [UInt8](repeating: 7, count: length)
        #expect(Self.code { try source.writeCompactedCopy(to: copy, encryptionKey: key) } == .invalidArgument)
        let tx = try source.beginWrite()
        #expect(Self.code { try tx.writeCompactedCopy(to: copy, encryptionKey: key) } == .invalidArgument)
        tx.rollback()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("copy") }.isEmpty)
    }

    /// A failing write or sync of an encrypted copy (the fault under the cipher) leaves no
    /// file at the destination and no temporary file (CopyFile.swift, invariant 3).
    @Test(arguments: [FaultInjectingFile.Call.write, .sync])
    func aFailingEncryptedCopyLeavesNoFile(call: FaultInjectingFile.Call) throws {
        let dir = TemporaryDirectory()
        var options = Self.options(key: Self.key)
        options.copyHooks = CopyHooks(fileWrapper: { FaultInjectingFile(wrapping: $0, failing: call, at: call == .sync ? 1 : 2, errno: EIO) })
        let path = dir.path("source.realm")
        _ = try Self.makeSource(path, key: Self.key, count: 3000)
        let source = try Store(path: path, options: options)
        let copy = dir.path("copy.realm")
        #expect(Self.code { try source.writeCompactedCopy(to: copy, encryptionKey: Self.otherKey) } == .ioFailure)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("copy") }.isEmpty)
    }
}
