import Foundation
import Testing
import TestSupport
@testable import OpenRealm

/// A realm whose file is damaged in a node no open reads (issue 24, point 6): throwing APIs
/// report `fileCorrupted`; `verifyIntegrityOnOpen` finds it at open; a read that cannot throw
/// stops the process with a message naming the damage, never as misuse.
@Suite(.childProcesses) struct DamagedRealmTests {
    static let types: [Object.Type] = [Dog.self, Owner.self, Pet.self]

    /// A realm of 20 dogs whose one cluster leaf is damaged; and the leaf's offset. A later
    /// commit leaves the leaf as it is: damage to the newest commit's writes is a torn commit,
    /// and recovery opens the version before it instead.
    static func damagedRealm() throws -> (TestFolder, offset: UInt64) {
        let folder = TestFolder()
        try checkedRealm(folder)
        let offset = try damageClusterLeaf(of: "Dog", inFileAt: folder.configuration().path)
        return (folder, offset)
    }

    static func checkedRealm(_ folder: TestFolder) throws {
        let realm = try Realm(configuration: folder.configuration(types))
        try realm.write { for i in 0..<20 { realm.create(Dog.self, value: ["name": "dog \(i)", "age": i]) } }
        try realm.write { realm.create(Owner.self, value: ["name": "Bob"]) }
    }

    @Test func verifyingAtOpenThrowsFileCorruptedNamingTheNode() throws {
        let (folder, offset) = try Self.damagedRealm()
        var configuration = folder.configuration(Self.types)
        configuration.verifyIntegrityOnOpen = true
        do {
            _ = try Realm(configuration: configuration)
            Issue.record("the damaged file opened")
        } catch let error as Realm.Error {
            #expect(error.code == .fileCorrupted)
            #expect(error.path == configuration.path)
            #expect(error.message.contains("clusterLeaf node at offset \(offset)"), "\(error)")
        }
    }

    @Test func aWriteThatMeetsTheDamageThrowsFileCorrupted() throws {
        let (folder, _) = try Self.damagedRealm()
        let realm = try Realm(configuration: folder.configuration(Self.types))
        #expect {
            try realm.write { realm.deleteAll() }
        } throws: { error in
            (error as? Realm.Error)?.code == .fileCorrupted
        }
        // The realm stays usable for what the damage does not reach.
        try realm.write { realm.create(Owner.self, value: ["name": "Ann"]) }
        #expect(realm.objects(Owner.self).count == 2)
    }

    @Test func aPropertyReadOfTheDamagedNodeTrapsNamingTheDamage() async throws {
        let (folder, offset) = try Self.damagedRealm()
        let path = folder.configuration().path
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [path = path as String] in
            let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: DamagedRealmTests.types))
            _ = realm.objects(Dog.self).map(\.name)
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        for part in ["The realm file \(path) is damaged", "clusterLeaf node at offset \(offset)", "verifyIntegrityOnOpen"] {
            #expect(output.contains(part), "the trap should name \(part): \(output.suffix(600))")
        }
        #expect(!output.contains("deleted or invalidated"))
        withExtendedLifetime(folder) {}
    }
}
