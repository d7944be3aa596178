import Foundation
import Testing
@testable import OpenRealm

/// `writeCopy(toFile:encryptionKey:)` from a live realm inside and outside a write, from a
/// frozen realm and from a `RealmActor` while writes go on (RoundTripTests covers every
/// property type through copies).
@Suite struct WriteCopyTests {
    static func people(_ range: Range<Int>) -> [[String: Any]] {
        range.map { ["id": $0, "name": "p\($0)", "email": ($0 % 3 == 0 ? "e\($0 % 10)@x" : nil) as Any, "score": Double($0)] }
    }

    /// What a realm of people holds, for comparing two files.
    static func snapshot(_ realm: Realm) -> [String] {
        realm.objects(Person.self).sorted(byKeyPath: "id").map { "\($0.id) \($0.name) \($0.email ?? "-") \($0.score)" }
    }

    static func copyURL(_ folder: TestFolder, _ name: String = "copy.realm") -> URL {
        folder.url.appendingPathComponent(name)
    }

    @Test func aCopyHoldsTheVersionTheRealmReadsInASmallerFile() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { for value in Self.people(0..<3_000) { realm.create(Person.self, value: value) } }
        try realm.write { realm.delete(realm.objects(Person.self).filter("id >= 500")) }
        let copy = Self.copyURL(folder)
        try realm.writeCopy(toFile: copy)
        let size = { (url: URL) in try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int }
        #expect(try size(copy) < size(configuration.fileURL!), "the copy holds only live data")
        var copied = configuration
        copied.fileURL = copy
        let reopened = try Realm(configuration: copied)
        #expect(Self.snapshot(reopened) == Self.snapshot(realm))
        // The indexes came along: lookups through them find the same objects.
        #expect(reopened.objects(Person.self).filter("email == %@", "e0@x").count == realm.objects(Person.self).filter("email == %@", "e0@x").count)
        #expect(reopened.object(ofType: Person.self, forPrimaryKey: 42)?.name == "p42")
        try RoundTripTests.verify(copied)
    }

    /// Inside a write the copy holds the write's changes so far (inserts, updates, deletes,
    /// index entries not yet merged, links to deleted objects cleared), and the write goes on
    /// and commits as if no copy had been made.
    @Test func aCopyInsideAWriteHoldsItsChangesAndTheWriteGoesOn() throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Person.self, Waypoint.self, Landmark.self, Coordinate.self])
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for value in Self.people(0..<1_000) { realm.create(Person.self, value: value) }
            let (a, b) = (Waypoint("a"), Waypoint("b"))
            a.next = b
            a.route.append(b)
            realm.add(a)
        }
        let copy = Self.copyURL(folder)
        realm.beginWrite()
        realm.delete(realm.objects(Person.self).filter("id < 100"))
        for person in realm.objects(Person.self).filter("id >= 900") { person.name = "renamed" }
        for value in Self.people(1_000..<1_300) { realm.create(Person.self, value: value) }
        realm.delete(try #require(realm.object(ofType: Waypoint.self, forPrimaryKey: "b")))
        let seen = Self.snapshot(realm)
        let seenByEmail = realm.objects(Person.self).filter("email == %@", "e0@x").count
        #expect(seenByEmail == 40)
        try realm.writeCopy(toFile: copy)
        #expect(realm.isInWriteTransaction)
        for value in Self.people(2_000..<2_010) { realm.create(Person.self, value: value) }
        try realm.commitWrite()
        #expect(realm.objects(Person.self).count == 1_210)
        try RoundTripTests.verify(configuration)

        configuration.fileURL = copy
        let reopened = try Realm(configuration: configuration)
        #expect(Self.snapshot(reopened) == seen)
        #expect(reopened.objects(Person.self).filter("email == %@", "e0@x").count == seenByEmail)
        let a = try #require(reopened.object(ofType: Waypoint.self, forPrimaryKey: "a"))
        #expect(a.next == nil && a.route.isEmpty, "links to the object deleted in the write are cleared in the copy")
        try RoundTripTests.verify(configuration)
    }

    @Test func aCopyRefusesAnExistingDestination() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.create(Person.self, value: ["id": 1]) }
        let copy = Self.copyURL(folder)
        try realm.writeCopy(toFile: copy)
        let before = try Data(contentsOf: copy)
        for destination in [copy, configuration.fileURL!] {
            #expect { try realm.writeCopy(toFile: destination) } throws: { ($0 as? Realm.Error)?.code == .fileExists }
        }
        realm.beginWrite()
        #expect { try realm.writeCopy(toFile: copy) } throws: { ($0 as? Realm.Error)?.code == .fileExists }
        realm.cancelWrite()
        #expect(try Data(contentsOf: copy) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasSuffix(".copying") }.isEmpty)
    }

    @Test func aFrozenRealmCopiesItsOwnVersion() throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Person.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { for value in Self.people(0..<200) { realm.create(Person.self, value: value) } }
        let frozen = realm.freeze()
        let seen = Self.snapshot(frozen)
        try realm.write { for value in Self.people(200..<400) { realm.create(Person.self, value: value) } }
        try frozen.writeCopy(toFile: Self.copyURL(folder))
        configuration.fileURL = Self.copyURL(folder)
        #expect(Self.snapshot(try Realm(configuration: configuration)) == seen)
    }

    @Test func anInMemoryRealmCopiesToAFile() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "copy-\(UUID())", objectTypes: [Person.self]))
        try realm.write { for value in Self.people(0..<50) { realm.create(Person.self, value: value) } }
        try realm.writeCopy(toFile: Self.copyURL(folder))
        let reopened = try Realm(configuration: Realm.Configuration(fileURL: Self.copyURL(folder), objectTypes: [Person.self]))
        #expect(Self.snapshot(reopened) == Self.snapshot(realm))
    }

    /// Copies from a RealmActor while another task writes through the same actor: every copy
    /// is one committed version (a prefix of the writes), whole, and the writes all land.
    @Test func aRealmActorCopiesWhileAnotherTaskWrites() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let store = RealmActor(configuration: configuration)
        let writes = 150
        async let writer: Void = {
            for i in 0..<writes {
                try await store.write { realm in _ = realm.create(Person.self, value: ["id": i, "name": "p\(i)"]) }
            }
        }()
        var copies: [URL] = []
        for n in 0..<6 {
            let url = Self.copyURL(folder, "actor-\(n).realm")
            try await store.writeCopy(toFile: url)
            copies.append(url)
        }
        try await writer
        try await store.writeCopy(toFile: Self.copyURL(folder, "last.realm"))
        for url in copies + [Self.copyURL(folder, "last.realm")] {
            var copied = configuration
            copied.fileURL = url
            let realm = try Realm(configuration: copied)
            let ids = Array(realm.objects(Person.self).sorted(byKeyPath: "id").map(\.id))
            #expect(ids == Array(0..<ids.count), "\(url.lastPathComponent) holds no prefix of the writes")
            try RoundTripTests.verify(copied)
        }
        var last = configuration
        last.fileURL = Self.copyURL(folder, "last.realm")
        #expect(try Realm(configuration: last).objects(Person.self).count == writes)
        await store.close()
    }
}
