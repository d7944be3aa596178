import Foundation
@testable import OpenRealm
@testable import RealmStorage
import Testing
import TestSupport

/// `writeCopy(toFile:encryptionKey:)` and compaction with keys: a copy with a key is encrypted
/// under a salt of its own whatever the realm is (encrypt, re-key), one without is plain
/// (decrypt); compacting an encrypted realm keeps its key and gives it a new salt; what cannot
/// be done is refused before anything is written.
@Suite struct EncryptedWriteCopyTests {
    static let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    static let otherKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 200) })
    static let marker = "Unmistakable Plaintext Marker"

    static func fill(_ realm: Realm, count: Int = 300) throws {
        try realm.write {
            for i in 0..<count {
                realm.create(Person.self, value: ["id": i, "name": "\(marker) \(i)", "email": "mail\(i % 9)@example.org", "score": Double(i)])
            }
        }
    }

    static func configuration(_ url: URL, key: Data?) -> Realm.Configuration {
        Realm.Configuration(fileURL: url, objectTypes: [Person.self], encryptionKey: key)
    }

    static func salt(_ url: URL) throws -> [UInt8]? {
        let header = [UInt8](try Data(contentsOf: url).prefix(EncryptionHeader.plaintextLength))
        if case .encrypted(let salt, _) = try EncryptionHeader.kind(of: header, path: url.path) { return salt }
        return nil
    }

    static func format(_ url: URL) throws -> UInt32 {
        let header = [UInt8](try Data(contentsOf: url).prefix(12))
        return header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self)) }
    }

    /// Opens `url` with `key`, checking its integrity, and returns what it holds.
    static func contents(_ url: URL, key: Data?) throws -> [String] {
        var configuration = configuration(url, key: key)
        configuration.verifyIntegrityOnOpen = true
        return WriteCopyTests.snapshot(try Realm(configuration: configuration))
    }

    @Test func aPlainRealmsCopyWithAKeyOpensOnlyWithItAndHoldsNoPlaintext() throws {
        let folder = TestFolder()
        let source = try Realm(configuration: folder.configuration([Person.self]))
        try Self.fill(source)
        let copy = WriteCopyTests.copyURL(folder)
        try source.writeCopy(toFile: copy, encryptionKey: Self.key)
        #expect(try Self.format(copy) == EncryptionHeader.formatVersion)
        let raw = [UInt8](try Data(contentsOf: copy))
        for needle in [Self.marker, "Unmistakable", "example.org", "Person", "email"] {
            #expect(!containsRun(raw[EncryptionHeader.plaintextLength...], Array(needle.utf8)), "found \(needle) in the copy")
        }
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: Self.configuration(copy, key: nil)) } == .decryptionFailed)
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: Self.configuration(copy, key: Self.otherKey)) } == .decryptionFailed)
        #expect(try Self.contents(copy, key: Self.key) == WriteCopyTests.snapshot(source))
        let reopened = try Realm(configuration: Self.configuration(copy, key: Self.key))
        try reopened.write { reopened.create(Person.self, value: ["id": 10_000, "name": "new"]) }
        #expect(reopened.objects(Person.self).count == 301)
    }

    @Test func anEncryptedRealmsCopyWithAnotherKeyIsReKeyed() throws {
        let folder = TestFolder()
        let sourceURL = folder.url.appendingPathComponent("source.realm")
        let source = try Realm(configuration: Self.configuration(sourceURL, key: Self.key))
        try Self.fill(source)
        let copy = WriteCopyTests.copyURL(folder)
        try source.writeCopy(toFile: copy, encryptionKey: Self.otherKey)
        #expect(try Self.salt(copy) != nil)
        #expect(try Self.salt(copy) != Self.salt(sourceURL))
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: Self.configuration(copy, key: Self.key)) } == .decryptionFailed)
        #expect(try Self.contents(copy, key: Self.otherKey) == WriteCopyTests.snapshot(source))
    }

    @Test func anEncryptedRealmsCopyWithoutAKeyIsPlain() throws {
        let folder = TestFolder()
        let source = try Realm(configuration: Self.configuration(folder.url.appendingPathComponent("source.realm"), key: Self.key))
        try Self.fill(source)
        let copy = WriteCopyTests.copyURL(folder)
        try source.writeCopy(toFile: copy)
        #expect(try Self.format(copy) == FileHeader.formatVersion)
        #expect(try Self.salt(copy) == nil)
        #expect(containsRun([UInt8](try Data(contentsOf: copy)), Array(Self.marker.utf8)))
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: Self.configuration(copy, key: Self.key)) } == .decryptionFailed)
        #expect(try Self.contents(copy, key: nil) == WriteCopyTests.snapshot(source))
        try RoundTripTests.verify(Self.configuration(copy, key: nil))
    }

    @Test func twoCopiesUnderOneKeyHaveDifferentSaltsAndCiphertext() throws {
        let folder = TestFolder()
        let sourceURL = folder.url.appendingPathComponent("source.realm")
        let source = try Realm(configuration: Self.configuration(sourceURL, key: Self.key))
        try Self.fill(source)
        let copies = [WriteCopyTests.copyURL(folder, "a.realm"), WriteCopyTests.copyURL(folder, "b.realm")]
        for url in copies { try source.writeCopy(toFile: url, encryptionKey: Self.key) }
        let salts = try (copies + [sourceURL]).map { try #require(try Self.salt($0)) }
        #expect(Set(salts.map { Data($0) }).count == 3, "every file has a salt of its own")
        let bytes = try copies.map { [UInt8](try Data(contentsOf: $0)) }
        #expect(bytes[0].count == bytes[1].count)
        #expect(bytes[0][EncryptionHeader.plaintextLength...] != bytes[1][EncryptionHeader.plaintextLength...])
        for url in copies { #expect(try Self.contents(url, key: Self.key) == WriteCopyTests.snapshot(source)) }
    }

    @Test func aCopyInsideAWriteAndFromARealmActorIsEncrypted() async throws {
        let folder = TestFolder()
        let configuration = Self.configuration(folder.url.appendingPathComponent("source.realm"), key: Self.key)
        do {
            let realm = try Realm(configuration: configuration)
            try Self.fill(realm, count: 20)
            realm.beginWrite()
            realm.create(Person.self, value: ["id": 999, "name": "uncommitted"])
            try realm.writeCopy(toFile: WriteCopyTests.copyURL(folder, "inside.realm"), encryptionKey: Self.otherKey)
            realm.cancelWrite()
        }
        #expect(try Self.contents(WriteCopyTests.copyURL(folder, "inside.realm"), key: Self.otherKey).count == 21)
        let actor = RealmActor(configuration: configuration)
        try await actor.writeCopy(toFile: WriteCopyTests.copyURL(folder, "actor.realm"), encryptionKey: Self.otherKey)
        try await actor.writeCopy(toFile: WriteCopyTests.copyURL(folder, "actor-progress.realm"), encryptionKey: Self.key,
                                  compression: .none) { _ in }
        await actor.close()
        #expect(try Self.contents(WriteCopyTests.copyURL(folder, "actor.realm"), key: Self.otherKey).count == 20)
        #expect(try Self.contents(WriteCopyTests.copyURL(folder, "actor-progress.realm"), key: Self.key).count == 20)
    }

    /// An LZ4 copy with a key: compressed, then encrypted; it opens read-only with that key
    /// only and holds none of the plaintext. From a plain realm and from an encrypted one (its
    /// key or another), on demand and through the inflate fallback.
    @Test(arguments: [nil, key], [CompressedReading.onDemand, .inflate])
    func anLZ4CopyWithAKeyOpensReadOnlyWithItAndHoldsNoPlaintext(sourceKey: Data?, reading: CompressedReading) throws {
        let folder = TestFolder()
        let source = try Realm(configuration: Self.configuration(folder.url.appendingPathComponent("source.realm"), key: sourceKey))
        try Self.fill(source, count: 2000)
        for copyKey in [Self.key, Self.otherKey] {
            let copy = WriteCopyTests.copyURL(folder, "copy-\(copyKey == Self.key ? "same" : "other").realmz")
            try source.writeCopy(toFile: copy, encryptionKey: copyKey, compression: .lz4)
            let raw = [UInt8](try Data(contentsOf: copy))
            for needle in [Self.marker, "Unmistakable", "example.org", "Person", "email"] {
                #expect(!containsRun(raw, Array(needle.utf8)), "found \(needle) in the copy")
            }
            var configuration = Self.configuration(copy, key: copyKey)
            configuration.readOnly = true
            configuration.compressedReading = reading
            let reopened = try Realm(configuration: configuration)
            #expect(WriteCopyTests.snapshot(reopened) == WriteCopyTests.snapshot(source))
            #expect(reopened.object(ofType: Person.self, forPrimaryKey: 1234)?.name == "\(Self.marker) 1234")
            for key in [nil, copyKey == Self.key ? Self.otherKey : Self.key] {
                configuration.encryptionKey = key
                #expect(EncryptionKeyTests.code { _ = try Realm(configuration: configuration) } == .decryptionFailed)
            }
        }
        // A key given for a plain LZ4 copy.
        let plain = WriteCopyTests.copyURL(folder, "plain.realmz")
        try source.writeCopy(toFile: plain, compression: .lz4)
        var configuration = Self.configuration(plain, key: Self.key)
        configuration.readOnly = true
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: configuration) } == .decryptionFailed)
    }

    @Test(arguments: [0, 32, 63, 65, 128])
    func aKeyOfAnotherLengthIsAnInvalidArgumentAndWritesNothing(length: Int) throws {
        let folder = TestFolder()
        let source = try Realm(configuration: folder.configuration([Person.self]))
        try Self.fill(source, count: 10)
        let copy = WriteCopyTests.copyURL(folder)
        let key = Data(repeating: 3, count: length)
        #expect(EncryptionKeyTests.code { try source.writeCopy(toFile: copy, encryptionKey: key) } == .invalidArgument)
        #expect(EncryptionKeyTests.code { try source.writeCopy(toFile: copy, encryptionKey: key, compression: .lz4) } == .invalidArgument)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix("copy") }.isEmpty)
    }

    @Test func compactingAnEncryptedRealmKeepsItEncryptedUnderANewSalt() throws {
        let folder = TestFolder()
        let configuration = Self.configuration(folder.url.appendingPathComponent("source.realm"), key: Self.key)
        let expected: [String]
        do {
            let realm = try Realm(configuration: configuration)
            try Self.fill(realm, count: 3_000)
            try realm.write { realm.delete(realm.objects(Person.self).filter("id >= 100")) }
            expected = WriteCopyTests.snapshot(realm)
        }
        let url = configuration.fileURL!
        let saltBefore = try Self.salt(url)
        let sizeBefore = try Data(contentsOf: url).count
        #expect(try Realm.compact(configuration: configuration))
        #expect(try Self.salt(url) != nil)
        #expect(try Self.salt(url) != saltBefore)
        #expect(try Data(contentsOf: url).count < sizeBefore / 2)
        #expect(!containsRun([UInt8](try Data(contentsOf: url))[EncryptionHeader.plaintextLength...], Array(Self.marker.utf8)))
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: Self.configuration(url, key: nil)) } == .decryptionFailed)
        #expect(try Self.contents(url, key: Self.key) == expected)
        // On launch too, and the realm goes on taking writes.
        var launching = configuration
        launching.shouldCompactOnLaunch = { _, _ in true }
        let realm = try Realm(configuration: launching)
        #expect(try Self.salt(url) != nil)
        try realm.write { realm.create(Person.self, value: ["id": 5_000, "name": "after"]) }
        #expect(realm.objects(Person.self).count == 101)
    }

    @Test func compactingWithAWrongKeyIsRefusedAndLeavesTheFile() throws {
        let folder = TestFolder()
        let configuration = Self.configuration(folder.url.appendingPathComponent("source.realm"), key: Self.key)
        try Self.fill(try Realm(configuration: configuration), count: 10)
        let before = try Data(contentsOf: configuration.fileURL!)
        #expect(EncryptionKeyTests.code { try Realm.compact(configuration: Self.configuration(configuration.fileURL!, key: Self.otherKey)) } == .decryptionFailed)
        #expect(EncryptionKeyTests.code { try Realm.compact(configuration: Self.configuration(configuration.fileURL!, key: nil)) } == .decryptionFailed)
        #expect(EncryptionKeyTests.code { try Realm.compact(configuration: Self.configuration(configuration.fileURL!, key: Data(count: 5))) } == .invalidArgument)
        #expect(try Data(contentsOf: configuration.fileURL!) == before)
    }

    /// `openrealm` with `--key-file` (raw or hex), `--new-key-file` and `--decrypt`: every command
    /// opens encrypted files, copies stay encrypted with the source's key unless told otherwise,
    /// and a key file that holds no key is an exit status of 1, never a trap (usage errors: 64).
    @Test func theCommandLineToolTakesKeyFiles() throws {
        let run = try CompressedWriteCopyTests.commandLineTool()
        let folder = TestFolder()
        let plain = folder.url.appendingPathComponent("plain.realm")
        try Self.fill(try Realm(configuration: Self.configuration(plain, key: nil)), count: 50)
        let expected = try Self.contents(plain, key: nil)
        func file(_ name: String, _ bytes: [UInt8]) throws -> String {
            let url = folder.url.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url.path
        }
        func url(_ name: String) -> URL { folder.url.appendingPathComponent(name) }
        let hex = Self.key.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        let hexKey = try file("key.hex", Array(" \n\(hex.uppercased())\n\t ".utf8))
        let rawKey = try file("key.raw", [UInt8](Self.key))
        let otherKey = try file("other.raw", [UInt8](Self.otherKey))
        let notKeys = try [file("short", [1, 2, 3]), file("long", [UInt8](repeating: 0x61, count: 65)),
                           file("not-hex", Array(String(repeating: "g", count: 128).utf8)), file("empty", []),
                           // A 32-byte key in hexadecimal: 64 bytes, but not a raw key.
                           file("hex-32", Array(String(repeating: "a5", count: 32).utf8))]

        // Encrypt a plain file, then read it with the key in either form.
        #expect(try run(["copy", plain.path, url("enc.realm").path, "--new-key-file", hexKey]) == 0)
        #expect(try Self.contents(url("enc.realm"), key: Self.key) == expected)
        for command in ["verify", "inspect"] {
            #expect(try run([command, url("enc.realm").path, "--key-file", rawKey]) == 0, "\(command) with the raw key")
            #expect(try run([command, "--key-file", hexKey, url("enc.realm").path]) == 0, "\(command) with the hex key")
            #expect(try run([command, url("enc.realm").path]) == 1, "\(command) without a key")
            #expect(try run([command, url("enc.realm").path, "--key-file", otherKey]) == 1, "\(command) with another key")
            for notKey in notKeys { #expect(try run([command, url("enc.realm").path, "--key-file", notKey]) == 1, "\(command) \(notKey)") }
            #expect(try run([command, url("enc.realm").path, "--key-file", url("missing").path]) == 1)
            // A usage error: argument-parser's status (EX_USAGE).
            #expect(try run([command, url("enc.realm").path, "--key-file"]) == 64)
        }
        // Copies: the source's key, another key, or none.
        #expect(try run(["copy", url("enc.realm").path, url("same.realm").path, "--key-file", rawKey]) == 0)
        #expect(try Self.salt(url("same.realm")) != nil)
        #expect(try Self.salt(url("same.realm")) != Self.salt(url("enc.realm")))
        #expect(try Self.contents(url("same.realm"), key: Self.key) == expected)
        #expect(try run(["copy", url("enc.realm").path, url("rekeyed.realm").path, "--key-file", rawKey, "--new-key-file", otherKey]) == 0)
        #expect(try Self.contents(url("rekeyed.realm"), key: Self.otherKey) == expected)
        #expect(try run(["compact", url("enc.realm").path, url("decrypted.realm").path, "--key-file", hexKey, "--decrypt"]) == 0)
        #expect(try Self.salt(url("decrypted.realm")) == nil)
        #expect(try Self.contents(url("decrypted.realm"), key: nil) == expected)
        // An LZ4 copy keeps the key (compressed, then encrypted); read with it, and back to a
        // writable realm.
        #expect(try run(["copy", url("enc.realm").path, url("archive.realmz").path, "--key-file", rawKey, "--lz4"]) == 0)
        #expect(try !containsRun([UInt8](Data(contentsOf: url("archive.realmz"))), Array(Self.marker.utf8)))
        for command in ["verify", "inspect"] {
            #expect(try run([command, url("archive.realmz").path, "--key-file", hexKey]) == 0, "\(command) of the LZ4 copy")
            #expect(try run([command, url("archive.realmz").path]) == 1, "\(command) of the LZ4 copy without a key")
            #expect(try run([command, url("archive.realmz").path, "--key-file", otherKey]) == 1, "\(command) of the LZ4 copy with another key")
        }
        #expect(try run(["copy", url("archive.realmz").path, url("unpacked.realm").path, "--key-file", rawKey, "--new-key-file", otherKey]) == 0)
        #expect(try Self.contents(url("unpacked.realm"), key: Self.otherKey) == expected)
        #expect(try run(["copy", plain.path, url("plain-archive.realmz").path, "--lz4", "--new-key-file", otherKey]) == 0)
        #expect(try run(["verify", url("plain-archive.realmz").path, "--key-file", otherKey]) == 0)
        #expect(try run(["copy", url("enc.realm").path, url("both.realm").path, "--key-file", rawKey, "--decrypt", "--new-key-file", otherKey]) == 64)
        #expect(!FileManager.default.fileExists(atPath: url("both.realm").path))
        // Compaction in place keeps the key, under a new salt.
        let salt = try Self.salt(url("enc.realm"))
        #expect(try run(["compact", url("enc.realm").path, "--key-file", rawKey]) == 0)
        #expect(try Self.salt(url("enc.realm")) != salt)
        #expect(try Self.contents(url("enc.realm"), key: Self.key) == expected)
    }
}
