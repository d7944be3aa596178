import Foundation
import Testing
@testable import RealmStorage

/// The header of an encrypted file (File/EncryptionHeader.swift): what a key is checked
/// against before anything of the file is read (E8), and the errors that name what does not fit.
@Suite struct EncryptionHeaderTests {
    static let key = [UInt8](repeating: 0x5A, count: 64)
    static let salt = (0..<32).map { UInt8($0) }

    /// A file holding only an encrypted header page for `key`: what `EncryptionHeader`
    /// reads. Its encrypted part is noise, as it would be to a reader without the key.
    static func encryptedHeaderFile(at path: String, key: [UInt8] = key, suite: UInt8 = EncryptionHeader.suiteXTSHMAC) throws {
        var bytes = EncryptionHeader.initial(salt: salt, keys: EncryptionKeys(userKey: key, salt: salt))
        bytes[EncryptionHeader.suiteOffset] = suite
        var noise = SystemRandomNumberGenerator()
        for i in EncryptionHeader.plaintextLength..<bytes.count { bytes[i] = UInt8.random(in: 0...255, using: &noise) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func plainFile(at path: String) throws {
        let store = try Store.open(path: path)
        _ = store
    }

    @Test func theHeaderKeepsItsFirst128BytesInTheClearAndNamesTheSuite() throws {
        let keys = EncryptionKeys(userKey: Self.key, salt: Self.salt)
        let header = EncryptionHeader.initial(salt: Self.salt, keys: keys)
        #expect(Array(header[0..<8]) == FileHeader.magic)
        #expect(try EncryptionHeader.kind(of: header, path: "x") == .encrypted(salt: Self.salt, keyCheck: keys.keyCheck))
        #expect(try EncryptionHeader.kind(of: FileHeader.initial(), path: "x") == .plain)
        // The key check depends on the key and the salt.
        #expect(EncryptionKeys(userKey: Self.key, salt: Self.salt.reversed()).keyCheck != keys.keyCheck)
        #expect(EncryptionKeys(userKey: [UInt8](repeating: 0x5B, count: 64), salt: Self.salt).keyCheck != keys.keyCheck)
    }

    @Test(arguments: [0, 1, 32, 63, 65, 128])
    func aKeyOfAnotherLengthIsAnInvalidArgument(length: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.encryptedHeaderFile(at: path)
        let key = [UInt8](repeating: 1, count: length)
        #expect { try EncryptionHeader.keys(ofFileAt: path, key: key) } throws: { ($0 as? StorageError)?.code == .invalidArgument }
        var options = StoreOptions()
        options.encryptionKey = key
        #expect { try Store.open(path: directory.path("new.realm"), options: options) } throws: { ($0 as? StorageError)?.code == .invalidArgument }
        #expect(!FileManager.default.fileExists(atPath: directory.path("new.realm")))
        options.durability = .memOnly
        #expect { try Store.open(path: directory.path("memory"), options: options) } throws: { ($0 as? StorageError)?.code == .invalidArgument }
    }

    @Test func theRightKeyFitsAndAWrongOneIsRefusedBeforeAnythingIsRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.encryptedHeaderFile(at: path)
        let keys = try #require(try EncryptionHeader.keys(ofFileAt: path, key: Self.key))
        #expect(keys.keyCheck == EncryptionKeys(userKey: Self.key, salt: Self.salt).keyCheck)
        var wrong = Self.key
        wrong[63] ^= 1
        #expect { try EncryptionHeader.keys(ofFileAt: path, key: wrong) } throws: { error in
            let error = error as? StorageError
            return error?.code == .decryptionFailed && error?.message.contains("does not match") == true
        }
        var options = StoreOptions()
        options.encryptionKey = wrong
        #expect { try Store.open(path: path, options: options) } throws: { ($0 as? StorageError)?.code == .decryptionFailed }
    }

    @Test func anEncryptedFileOpenedWithoutAKeySaysItIsEncrypted() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.encryptedHeaderFile(at: path)
        for readOnly in [false, true] {
            #expect { try Store.open(path: path, options: StoreOptions(readOnly: readOnly)) } throws: { error in
                let error = error as? StorageError
                return error?.code == .decryptionFailed && error?.message.contains("is encrypted") == true
            }
        }
    }

    @Test func aKeyForAPlainFileIsRefusedAndTheFileIsLeftAsItWas() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.plainFile(at: path)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        var options = StoreOptions()
        options.encryptionKey = Self.key
        #expect { try Store.open(path: path, options: options) } throws: { error in
            let error = error as? StorageError
            return error?.code == .decryptionFailed && error?.message.contains("not encrypted") == true
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        // Still a plain file that opens without a key.
        _ = try Store.open(path: path)
    }

    @Test func aSuiteThisBuildDoesNotKnowIsANewerFormat() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.encryptedHeaderFile(at: path, suite: 9)
        #expect { try EncryptionHeader.keys(ofFileAt: path, key: Self.key) } throws: { ($0 as? StorageError)?.code == .unsupportedFormatVersion }
        #expect { try Store.open(path: path) } throws: { ($0 as? StorageError)?.code == .unsupportedFormatVersion }
    }

    @Test func noFileMeansNoKeysAndNothingCreated() throws {
        let directory = TemporaryDirectory()
        #expect(try EncryptionHeader.keys(ofFileAt: directory.path(), key: Self.key) == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.path()))
    }

    /// A store already open in this process is shared only with openers of the same key: the
    /// file's check passed for that key, so another (or none, or one for a plain file) is refused.
    @Test func anOpenStoreIsNotSharedWithAnotherKey() throws {
        let dir = TemporaryDirectory()
        let encrypted = dir.path("encrypted.realm"), plain = dir.path("plain.realm")
        var options = StoreOptions()
        options.encryptionKey = Self.key
        let open = try Store.open(path: encrypted, options: options)
        let shared = try Store.open(path: encrypted, options: options)
        #expect(open === shared)
        options.encryptionKey = [UInt8](repeating: 0x33, count: 64)
        #expect(EncryptedCopyTests.code { _ = try Store.open(path: encrypted, options: options) } == .decryptionFailed)
        #expect(EncryptedCopyTests.code { _ = try Store.open(path: encrypted, options: StoreOptions()) } == .decryptionFailed)
        options.encryptionKey = [UInt8](repeating: 0x33, count: 32)
        #expect(EncryptedCopyTests.code { _ = try Store.open(path: encrypted, options: options) } == .invalidArgument)
        let plainStore = try Store.open(path: plain)
        options.encryptionKey = Self.key
        #expect(EncryptedCopyTests.code { _ = try Store.open(path: plain, options: options) } == .decryptionFailed)
        withExtendedLifetime((open, plainStore)) {}
    }
}
