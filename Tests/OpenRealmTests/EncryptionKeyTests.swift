import Foundation
import OpenRealm
@testable import RealmStorage
import Testing
import TestSupport

/// `Realm.Configuration.encryptionKey`: a key is checked for its length and against the file's
/// header, and the errors say what does not fit; a realm in memory needs none; an encrypted
/// file holds none of its plaintext.
@Suite struct EncryptionKeyTests {
    static let key = Data(repeating: 0xA5, count: 64)

    static func code(_ body: () throws -> Void) -> Realm.Error.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? Realm.Error)?.code
        }
    }

    @Test(arguments: [0, 16, 32, 63, 65])
    func aKeyOfAnotherLengthIsAnInvalidArgument(length: Int) {
        let folder = TestFolder()
        var configuration = folder.configuration()
        configuration.encryptionKey = Data(repeating: 1, count: length)
        #expect(Self.code { _ = try Realm(configuration: configuration) } == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: configuration.fileURL!.path))
        configuration.inMemoryIdentifier = "memory-\(UUID().uuidString)"
        #expect(Self.code { _ = try Realm(configuration: configuration) } == .invalidArgument)
    }

    @Test func aRealmInMemoryNeedsNoKeyAndTakesOne() throws {
        var configuration = Realm.Configuration(inMemoryIdentifier: "memory-\(UUID().uuidString)", encryptionKey: Self.key)
        configuration.objectTypes = [Dog.self]
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        #expect(realm.objects(Dog.self).first?.name == "Rex")
    }

    @Test func aKeyForAPlainRealmIsRefusedAndTheRealmStaysAsItWas() throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Dog.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        }
        let before = try Data(contentsOf: configuration.fileURL!)
        configuration.encryptionKey = Self.key
        #expect(Self.code { _ = try Realm(configuration: configuration) } == .decryptionFailed)
        #expect(try Data(contentsOf: configuration.fileURL!) == before)
        configuration.encryptionKey = nil
        #expect(try Realm(configuration: configuration).objects(Dog.self).count == 1)
    }

    @Test func anEncryptedRealmOpensWithItsKeyOnly() throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = Self.key
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.create(Dog.self, value: ["name": "Rex", "age": 7]) }
        }
        var without = configuration
        without.encryptionKey = nil
        #expect(Self.code { _ = try Realm(configuration: without) } == .decryptionFailed)
        without.readOnly = true
        #expect(Self.code { _ = try Realm(configuration: without) } == .decryptionFailed)
        var wrong = configuration
        wrong.encryptionKey = Data(repeating: 0xA6, count: 64)
        #expect(Self.code { _ = try Realm(configuration: wrong) } == .decryptionFailed)
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Dog.self).first?.name == "Rex")
        #expect(realm.objects(Dog.self).first?.age == 7)
    }

    /// An encrypted file whose clear format byte (5 to 4, or to 1, which would ask for the
    /// format upgrade) or cipher suite byte (to 0) was damaged is reported as a damaged
    /// encrypted file (`fileCorrupted`), with its key, another or none, not as a plain file or
    /// an old format; and it is left as it was.
    @Test(arguments: zip([8, 8, EncryptionHeader.suiteOffset], [UInt8(4), 1, 0]))
    func aDamagedClearHeaderIsReportedAsADamagedEncryptedFile(offset: Int, value: UInt8) throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = Self.key
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        }
        var bytes = try Data(contentsOf: configuration.fileURL!)
        bytes[offset] = value
        try bytes.write(to: configuration.fileURL!)
        for key in [Self.key, Data(repeating: 0xA6, count: 64), nil] {
            configuration.encryptionKey = key
            do {
                _ = try Realm(configuration: configuration)
                Issue.record("opened a damaged header with key \(String(describing: key?.first))")
            } catch let error as Realm.Error {
                #expect(error.code == .fileCorrupted, "\(error)")
                #expect(error.message.contains("header is damaged"), "\(error.message)")
            }
        }
        #expect(try Data(contentsOf: configuration.fileURL!) == bytes)
    }

    @Test func theFileHoldsNoneOfWhatWasWritten() throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = Self.key
        let name = "Sir Barksalot the Unmistakable"
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for i in 0..<200 { realm.create(Dog.self, value: ["name": "\(name) \(i)", "breed": "Plaintext Hound", "age": 0x1234_5678 + i]) }
            }
        }
        let raw = [UInt8](try Data(contentsOf: configuration.fileURL!))
        for needle in [Array("Sir Barksalot".utf8), Array("Plaintext Hound".utf8), Array("Dog".utf8), Array("breed".utf8),
                       withUnsafeBytes(of: Int64(0x1234_5678).littleEndian, Array.init)] {
            #expect(!containsRun(raw[EncryptionHeader.plaintextLength...], needle), "found \(needle) in the file")
        }
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Dog.self).filter("age == %@", 0x1234_5678 + 5).first?.name == "\(name) 5")
    }
}
