import Foundation
import Testing
@testable import OpenRealm

@Suite struct MixedValueTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000.25)
    static var values: [AnyRealmValue] { [
        .none, .int(.min), .int(.max), .bool(true), .float(1.5), .double(-0.25), .string(""), .string("héllo"),
        .data(Data([0, 1, 2])), .date(date), .objectId(try! ObjectId(string: "65123456789abcdef0123456")),
        .decimal128(try! Decimal128(string: "12345.6789")), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
    ] }

    @Test func everyFormRoundTripsThroughReopening() throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            try realm.write {
                for (i, value) in Self.values.enumerated() {
                    let mixed = Mixed()
                    mixed.id = i
                    mixed.value = value
                    mixed.tag = value
                    mixed.list.append(objectsIn: Self.values)
                    mixed.map["v"] = value
                    realm.add(mixed)
                }
            }
        }
        let realm = try Realm(configuration: folder.configuration())
        for (i, value) in Self.values.enumerated() {
            let mixed = try #require(realm.object(ofType: Mixed.self, forPrimaryKey: i))
            #expect(mixed.value == value)
            #expect(mixed.tag == value)
            #expect(Array(mixed.list) == Self.values)
            #expect(mixed.map["v"] == value)
        }
        #expect(realm.objects(Mixed.self).count == Self.values.count)
    }

    @Test func aMixedValueLinksToObjectsOfAnyClassAndForgetsDeletedOnes() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let dog = Dog()
        dog.name = "Rex"
        let person = Person()
        person.id = 7
        try realm.write {
            let a = realm.create(Mixed.self, value: ["id": 1])
            a.value = .object(dog)  // unmanaged: added with the link
            let b = realm.create(Mixed.self, value: ["id": 2])
            realm.add(person)
            b.value = .object(person)
            b.list.append(.object(dog))
            b.list.append(.int(3))
        }
        let a = try #require(realm.object(ofType: Mixed.self, forPrimaryKey: 1))
        let b = try #require(realm.object(ofType: Mixed.self, forPrimaryKey: 2))
        #expect(dog.realm === realm)
        #expect(a.value.object(Dog.self)?.name == "Rex")
        #expect(a.value.object(Person.self) == nil)
        #expect(b.value.object(Person.self)?.id == 7)
        #expect(b.list.first?.dynamicObject is Dog)
        try realm.write { realm.delete(dog) }
        #expect(a.value == .none)
        #expect(Array(b.list) == [.int(3)])
    }

    @Test func decimalsAndIdentifiersRoundTripAndTheirTypesAreChecked() throws {
        let folder = TestFolder()
        let id = ObjectId.generate()
        let token = UUID()
        do {
            let realm = try Realm(configuration: folder.configuration([Money.self]))
            try realm.write {
                let money = Money()
                money.id = id
                money.amount = try! Decimal128(string: "-0.000000000000000000000000000000001")
                money.fee = 0.1
                money.history.append(objectsIn: [1, Decimal128.maximumDecimalNumber, .nan])
                money.token = token
                realm.add(money)
                realm.add(Money())
            }
        }
        let realm = try Realm(configuration: folder.configuration([Money.self]))
        let money = try #require(realm.object(ofType: Money.self, forPrimaryKey: id))
        #expect(money.amount == (try Decimal128(string: "-1E-33")))
        #expect(money.fee == Decimal128(0.1))
        #expect(money.history.count == 3 && money.history[1] == .maximumDecimalNumber && money.history[2].isNaN)
        #expect(money.token == token)
        let other = try #require(realm.object(ofType: Money.self, forPrimaryKey: ObjectId()))
        #expect(other.amount == 0 && other.fee == nil && other.token == nil)
        // A UUID column is not an ObjectId column, though both are a few raw bytes.
        #expect { try Realm(configuration: folder.configuration([MoneyWithObjectIdToken.self])) } throws: { error in
            (error as? Realm.Error)?.code == .schemaMismatch && (error as? Realm.Error)?.message.contains("token") == true
        }
    }

    @Test func integerPrimaryKeysOfAnySignFindTheirObjects() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Person.self]))
        let ids = [0, -1, Int.min, Int.max, 42]
        try realm.write {
            for id in ids { realm.create(Person.self, value: ["id": id, "name": "p\(id)"]) }
            realm.create(Person.self, value: ["id": 42, "name": "updated"], update: .modified)
        }
        for id in ids { #expect(realm.object(ofType: Person.self, forPrimaryKey: id)?.id == id) }
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 42)?.name == "updated")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 43) == nil)
        #expect(realm.objects(Person.self).count == ids.count)
    }

    @Test func createTakesPlainValuesForMixedProperties() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let dog = Dog()
        try realm.write {
            realm.create(Mixed.self, value: ["id": 1, "value": "text", "tag": Int8(5), "list": [1, "a", nil, 2.5, dog],
                                             "map": ["k": true]])
        }
        let mixed = try #require(realm.object(ofType: Mixed.self, forPrimaryKey: 1))
        #expect(mixed.value == .string("text"))
        #expect(mixed.tag == .int(5))
        #expect(Array(mixed.list.prefix(4)) == [.int(1), .string("a"), .none, .double(2.5)])
        #expect(mixed.list[4].object(Dog.self) != nil)
        #expect(mixed.map["k"] == .bool(true))
    }

    @Test func aPrimaryKeyDeletedAndAddedAgainInOneWriteKeepsItsNewLinks() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let old = Person()
        old.id = 5
        old.name = "old"
        try realm.write {
            let a = realm.create(Mixed.self, value: ["id": 1])
            a.value = .object(old)
        }
        try realm.write {
            realm.delete(old)
            let new = realm.create(Person.self, value: ["id": 5, "name": "new"])
            let b = realm.create(Mixed.self, value: ["id": 2])
            b.value = .object(new)
            b.list.append(.object(new))
        }
        #expect(realm.object(ofType: Mixed.self, forPrimaryKey: 1)?.value == AnyRealmValue.none)
        let b = try #require(realm.object(ofType: Mixed.self, forPrimaryKey: 2))
        #expect(b.value.object(Person.self)?.name == "new")
        #expect(b.list.first?.object(Person.self)?.name == "new")
        // The deleted object does not turn into the new one with its key.
        #expect(old.isInvalidated)
    }

    @Test func aDeletionThatIsCancelledLeavesTheObjectLive() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let person = Person()
        person.id = 9
        try realm.write { realm.add(person) }
        realm.beginWrite()
        realm.delete(person)
        #expect(person.isInvalidated)
        realm.cancelWrite()
        #expect(!person.isInvalidated)
        #expect(person.id == 9)
    }

    @Test func aMixedZeroKeepsItsSign() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let mixed = Mixed()
        mixed.value = .double(0)
        try realm.write { realm.add(mixed) }
        try realm.write { mixed.value = .double(-0.0) }
        #expect(mixed.value.doubleValue?.sign == .minus)
    }
}
