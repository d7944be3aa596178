import Foundation
import Testing
@testable import OpenRealm

// Issue 24: data that cannot be stored (a duplicate primary key, a value over a limit, a
// `create` value that does not fit the schema, an object of another realm) never stops the
// process. `add` and `create` keep Realm's non-throwing signatures: the first such error is
// recorded, and the write that made it throws it, keeping nothing of its changes.

@Suite struct WriteFailureTests {
    /// Runs `body` in `realm.write`, expects it to throw `code` with `message` in its message,
    /// then checks that the realm still writes.
    private static func expectWriteFails(_ realm: Realm, _ code: Realm.Error.Code, _ message: String,
                                         sourceLocation: SourceLocation = #_sourceLocation, _ body: () -> Void) {
        do {
            try realm.write(body)
            Issue.record("the write should have failed with \(code)", sourceLocation: sourceLocation)
        } catch let error as Realm.Error {
            #expect(error.code == code, sourceLocation: sourceLocation)
            #expect(error.message.contains(message), "message: \(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
        #expect(!realm.isInWriteTransaction, sourceLocation: sourceLocation)
        #expect(throws: Never.self, sourceLocation: sourceLocation) { try realm.write { realm.create(Dog.self, value: ["name": "after"]) } }
    }

    @Test func aDuplicatePrimaryKeyFailsTheWriteAndKeepsNothingOfIt() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.write { realm.create(Owner.self, value: ["name": "Ann"]) }
        let first = Person(value: ["id": 1, "name": "first"])
        Self.expectWriteFails(realm, .duplicatePrimaryKey, "existing primary key value") {
            realm.add(first)
            realm.add(Person(value: ["id": 1, "name": "second"]))
        }
        Self.expectWriteFails(realm, .duplicatePrimaryKey, "existing primary key value") {
            realm.create(Owner.self, value: ["name": "Cy", "bestFriend": ["name": "Ann"]])
        }
        #expect(realm.objects(Person.self).isEmpty && first.isInvalidated)
        #expect(realm.objects(Owner.self).map(\.name) == ["Ann"])
        #expect(realm.objects(Dog.self).count == 2)
        try realm.write { realm.add(Person(value: ["id": 1, "name": "again"])) }
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 1)?.name == "again")
        try RoundTripTests.verify(folder)
    }

    @Test func aValueOverSixteenMebibytesFailsTheWrite() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let tooLarge = Data(count: 16 * 1024 * 1024 + 1)
        Self.expectWriteFails(realm, .valueTooLarge, "exceeds the 16 MiB limit") {
            realm.create(AllTypes.self, value: ["key": "x", "data": tooLarge])
        }
        let kept = try realm.write { realm.create(AllTypes.self, value: ["key": "kept", "data": Data([1])]) }
        Self.expectWriteFails(realm, .valueTooLarge, "exceeds the 16 MiB limit") {
            kept.string = "changed"
            kept.data = tooLarge
        }
        #expect(kept.data == Data([1]) && kept.string == "")
        #expect(realm.objects(AllTypes.self).map(\.key) == ["kept"])
        try RoundTripTests.verify(folder)
    }

    /// A list over the element limit (16,777,216 elements) or over 256 MiB fails the write
    /// through `add`, `create` and a managed list's append, as a value over 16 MiB does.
    @Test func aListOverItsLimitsFailsTheWrite() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let tooMany = [Bool](repeating: true, count: 16 * 1024 * 1024 + 1)
        let unmanaged = EveryList()
        unmanaged.id = 1
        unmanaged.bools.append(objectsIn: tooMany)
        Self.expectWriteFails(realm, .valueTooLarge, "elements exceeds the limit of 16777216") { realm.add(unmanaged) }
        Self.expectWriteFails(realm, .valueTooLarge, "elements exceeds the limit of 16777216") {
            realm.create(EveryList.self, value: ["id": 2, "bools": tooMany])
        }
        let kept = try realm.write { realm.create(EveryList.self, value: ["id": 3, "bools": [true]]) }
        Self.expectWriteFails(realm, .valueTooLarge, "elements exceeds the limit of 16777216") {
            kept.ints.append(7)
            kept.bools.append(objectsIn: tooMany)
        }
        // 17 values of 16 MiB: each within its own limit, the list over 256 MiB.
        let large = [Data](repeating: Data(count: 16 * 1024 * 1024), count: 17)
        Self.expectWriteFails(realm, .valueTooLarge, "exceeds the 256 MiB limit") {
            kept.datas.append(objectsIn: large)
        }
        #expect(Array(kept.bools) == [true] && kept.ints.isEmpty && kept.datas.isEmpty)
        #expect(realm.objects(EveryList.self).map(\.id) == [3])
        try RoundTripTests.verify(folder)
    }

    @Test func aValueThatDoesNotFitTheSchemaFailsTheWrite() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        Self.expectWriteFails(realm, .invalidArgument, "Invalid value 'three' for property 'Dog.age'") {
            realm.create(Dog.self, value: ["age": "three"])
        }
        Self.expectWriteFails(realm, .invalidArgument, "for property 'Dog.name' of type String") {
            realm.create(Dog.self, value: ["name": NSNull()])
        }
        Self.expectWriteFails(realm, .invalidArgument, "for property 'Shelter.tags' of type List<String>: element 1 ('7') is not of type String") {
            realm.create(Shelter.self, value: ["tags": ["dogs", 7]])
        }
        Self.expectWriteFails(realm, .invalidArgument, "for property 'Shelter.pets' of type List<Pet>: expected an array of Pet") {
            realm.create(Shelter.self, value: ["pets": ["name": "Rex"]])
        }
        Self.expectWriteFails(realm, .invalidArgument, "for property 'Scoreboard.scores' of type Map<String, Int>: the value 'one' for key 'a' is not of type Int") {
            realm.create(Scoreboard.self, value: ["scores": ["a": "one"]])
        }
        Self.expectWriteFails(realm, .invalidArgument, "for property 'Address.street' of type String") {
            realm.create(Contact.self, value: ["name": "Cy", "others": [["street": 5]]])
        }
        Self.expectWriteFails(realm, .invalidArgument, "Invalid array for Person: 2 values for 4 properties") {
            realm.create(Person.self, value: [1, "Ann"])
        }
        Self.expectWriteFails(realm, .invalidArgument, "pass a dictionary, an array or a Dog") {
            realm.create(Dog.self, value: "Rex")
        }
        #expect(realm.objects(Dog.self).map(\.name) == Array(repeating: "after", count: 8))
        try RoundTripTests.verify(folder)
    }

    /// Values of the right kind that the property's type cannot hold are not stored as
    /// something else (a truncated integer, an enum's first case).
    @Test func aValueOutsideThePropertysTypeFailsTheWrite() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        Self.expectWriteFails(realm, .invalidArgument, "Invalid value '300' for property 'Reading.int8' of type Int8") {
            realm.create(Reading.self, value: ["id": 1, "int8": 300])
        }
        Self.expectWriteFails(realm, .invalidArgument, "Invalid value 'angry' for property 'Reading.mood' of type Mood") {
            realm.create(Reading.self, value: ["id": 1, "mood": "angry"])
        }
        Self.expectWriteFails(realm, .invalidArgument, "Invalid value '4' for property 'Reading.size' of type Size?") {
            realm.create(Reading.self, value: try! JSONSerialization.jsonObject(with: Data(#"{"id": 1, "size": 4}"#.utf8)))
        }
        Self.expectWriteFails(realm, .invalidArgument, "Invalid value '2.5' for property 'Reading.int32' of type Int32") {
            realm.create(Reading.self, value: try! JSONSerialization.jsonObject(with: Data(#"{"id": 1, "int32": 2.5}"#.utf8)))
        }
        // JSON has no dates: convert them before create, as Realm asks.
        Self.expectWriteFails(realm, .invalidArgument, "for property 'Dog.dateOfBirth' of type Date") {
            realm.create(Dog.self, value: try! JSONSerialization.jsonObject(with: Data(#"{"dateOfBirth": "2020-01-01"}"#.utf8)))
        }
        #expect(realm.objects(Reading.self).isEmpty)
        #expect(realm.objects(Shelter.self).isEmpty && realm.objects(Contact.self).isEmpty)
        try RoundTripTests.verify(folder)
    }

    @Test func anObjectOfAnotherRealmFailsTheWrite() throws {
        let folder = TestFolder(), other = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let otherRealm = try Realm(configuration: other.configuration())
        let rex = try otherRealm.write { otherRealm.create(Pet.self, value: ["name": "Rex"]) }
        Self.expectWriteFails(realm, .invalidArgument, "managed by another Realm") { realm.add(rex) }
        Self.expectWriteFails(realm, .invalidArgument, "managed by another Realm") {
            let owner = Owner()
            owner.name = "Ann"
            owner.dog = rex
            realm.add(owner)
        }
        #expect(realm.objects(Pet.self).isEmpty && realm.objects(Owner.self).isEmpty)
        #expect(rex.realm === otherRealm)
        try RoundTripTests.verify(folder)
    }

    @Test func commitWriteThrowsTheRecordedError() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        realm.beginWrite()
        realm.create(Dog.self, value: ["name": "Rex"])
        realm.create(Dog.self, value: ["age": "three"])
        #expect(throws: Realm.Error.self) { try realm.commitWrite() }
        #expect(!realm.isInWriteTransaction && realm.objects(Dog.self).isEmpty)
        try realm.write { realm.create(Dog.self, value: ["name": "Bo"]) }
        #expect(realm.objects(Dog.self).map(\.name) == ["Bo"])
        try RoundTripTests.verify(folder)
    }

    @Test @TestActor func asyncWriteThrowsTheRecordedError() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        await #expect(throws: Realm.Error.self) {
            try await realm.asyncWrite {
                realm.create(Person.self, value: ["id": 1])
                realm.create(Person.self, value: ["id": 1])
            }
        }
        #expect(!realm.isInWriteTransaction && realm.objects(Person.self).isEmpty)
        try await realm.asyncWrite { realm.create(Person.self, value: ["id": 1]) }
        #expect(realm.objects(Person.self).count == 1)
        try RoundTripTests.verify(folder)
    }

    @Test func writeAsyncHandsTheRecordedErrorToItsCallback() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let queue = DispatchQueue(label: "write-failure")
        let (code, counts): (Realm.Error.Code?, [Int]) = await AsyncWriteCallbackTests.onQueue(queue) { done in
            let realm = try! Realm(configuration: configuration, queue: queue)
            realm.writeAsync {
                realm.create(Person.self, value: ["id": 1])
                realm.create(Person.self, value: ["id": 1])
            } onComplete: { error in
                let afterFailure = realm.objects(Person.self).count
                realm.writeAsync {
                    realm.create(Person.self, value: ["id": 2])
                } onComplete: { _ in
                    done(((error as? Realm.Error)?.code, [afterFailure, realm.objects(Person.self).count]))
                }
            }
        }
        #expect(code == .duplicatePrimaryKey)
        #expect(counts == [0, 1])
        try RoundTripTests.verify(folder)
    }

    @Test func realmActorWriteThrowsTheRecordedErrorAndKeepsTheOtherWrites() async throws {
        let folder = TestFolder()
        let store = RealmActor(configuration: folder.configuration())
        try await store.write { realm in _ = realm.create(Person.self, value: ["id": 1, "name": "kept"]) }
        await #expect(throws: Realm.Error.self) {
            try await store.write { realm in
                realm.create(Person.self, value: ["id": 2])
                realm.create(Person.self, value: ["id": 1])
            }
        }
        try await store.write { realm in _ = realm.create(Person.self, value: ["id": 3]) }
        let ids = try await store.read { realm in realm.objects(Person.self).map(\.id) }
        #expect(ids == [1, 3])
        try RoundTripTests.verify(folder)
    }
}
