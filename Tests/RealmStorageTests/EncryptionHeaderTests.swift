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

    // MARK: A damaged clear header (E9)

    /// The header of an encrypted file whose first 128 bytes were changed by `damage`.
    static func damagedHeaderFile(at path: String, _ damage: (inout [UInt8]) -> Void) throws {
        try encryptedHeaderFile(at: path)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        damage(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func setFormat(_ format: UInt32, _ bytes: inout [UInt8]) {
        withUnsafeBytes(of: format.littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
    }

    /// What opening the file at `path` throws, with a key and without, through the header
    /// check and through a store.
    static func refusals(_ path: String, key: [UInt8]? = key) -> [(code: StorageError.Code?, message: String)] {
        [outcome(path, key: key, store: false), outcome(path, key: key, store: true),
         outcome(path, key: nil, store: false), outcome(path, key: nil, store: true)]
    }

    static func outcome(_ path: String, key: [UInt8]?, store: Bool) -> (code: StorageError.Code?, message: String) {
        do throws(StorageError) {
            if store {
                var options = StoreOptions(create: false)
                options.encryptionKey = key
                _ = try Store.open(path: path, options: options)
            } else {
                _ = try EncryptionHeader.keys(ofFileAt: path, key: key)
            }
            return (nil, "opened")
        } catch {
            return (error.code, error.message)
        }
    }

    /// Format 5 belongs to encrypted files only, and every one names its suite: suite 0 is a
    /// damaged header, with the key, with another and without one, not "not encrypted".
    @Test(arguments: [false, true])
    func formatFiveWithNoSuiteIsADamagedHeader(clearingSaltAndCheck: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.damagedHeaderFile(at: path) { bytes in
            bytes[EncryptionHeader.suiteOffset] = 0
            if clearingSaltAndCheck { bytes.replaceSubrange(EncryptionHeader.saltOffset..<72, with: [UInt8](repeating: 0, count: 48)) }
        }
        for key in [Self.key, [UInt8](repeating: 0x11, count: 64)] {
            for (code, message) in Self.refusals(path, key: key) {
                #expect(code == .fileCorrupted, "\(message)")
                #expect(message.contains("header is damaged") && !message.contains("not encrypted"), "\(message)")
            }
        }
    }

    /// A format before 5 with the suite, the salt and the key check set: an encrypted file
    /// whose format version was damaged (5 xor 1 is 4), refused as damaged with any key or none.
    @Test(arguments: [UInt32(4), 1, 3])
    func anEarlierFormatWithTheSuiteSaltAndKeyCheckIsADamagedHeader(format: UInt32) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.damagedHeaderFile(at: path) { Self.setFormat(format, &$0) }
        for key in [Self.key, [UInt8](repeating: 0x11, count: 64)] {
            for (code, message) in Self.refusals(path, key: key) {
                #expect(code == .fileCorrupted, "\(message)")
                #expect(message.contains("header is damaged") && !message.contains("not encrypted,"), "\(message)")
            }
        }
    }

    /// An earlier format with the suite cleared too (two damaged fields) but a salt and key
    /// check that fit the key given: damaged. With another key: no proof either way, so a
    /// `decryptionFailed` that names both readings. Without a key it is read as a plain file,
    /// whose slots (encrypted noise here) do not verify.
    @Test func anEarlierFormatWhoseSaltAndKeyCheckFitTheKeyIsADamagedHeader() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.damagedHeaderFile(at: path) { bytes in
            Self.setFormat(4, &bytes)
            bytes[EncryptionHeader.suiteOffset] = 0
        }
        let results = Self.refusals(path)
        #expect(results[0].code == .fileCorrupted && results[0].message.contains("fit the key given"), "\(results[0].message)")
        #expect(results[1].code == .fileCorrupted, "\(results[1].message)")
        let other = Self.refusals(path, key: [UInt8](repeating: 0x11, count: 64))
        for (code, message) in other.prefix(2) {
            #expect(code == .decryptionFailed && message.contains("header is damaged") && message.contains("plain file"), "\(message)")
        }
        #expect(results[2].code == nil, "the header check alone finds nothing to refuse without a key: \(results[2].message)")
        #expect(results[3].code == .fileCorrupted, "\(results[3].message)")
    }

    /// A plain file never reads bytes 17..<128: one damaged there still opens without a key,
    /// as before (DamagedFileTests), and a key given for it is told what the bytes may mean.
    @Test(arguments: [EncryptionHeader.suiteOffset, EncryptionHeader.saltOffset + 5, EncryptionHeader.keyCheckOffset + 15, 100])
    func aPlainFileWithOneReservedByteSetStillOpensWithoutAKey(offset: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Self.plainFile(at: path)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[offset] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        _ = try Store.open(path: path, options: StoreOptions(create: false))
        var options = StoreOptions(create: false)
        options.encryptionKey = Self.key
        #expect { try Store.open(path: path, options: options) } throws: { error in
            let error = error as? StorageError
            return error?.code == .decryptionFailed && error?.message.contains("not encrypted") == true
        }
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
