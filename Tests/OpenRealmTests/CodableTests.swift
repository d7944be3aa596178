import Foundation
import Testing
@testable import OpenRealm

// Models that conform to Codable as Realm Swift code declares it: `class X: Object, Codable`.

enum CodableMood: String, PersistableEnum, Codable {
    case calm, glad
}

final class CodableScalars: Object, Codable {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var decimal: Decimal128
    @Persisted var objectId: ObjectId
    @Persisted var uuid: UUID
    @Persisted var mixed: AnyRealmValue
    @Persisted var mood = CodableMood.calm
    @Persisted var optionalInt: Int?
    @Persisted var optionalString: String?
    @Persisted var optionalDate: Date?
    @Persisted var optionalObjectId: ObjectId?
    @Persisted var optionalMood: CodableMood?
}

final class CodablePet: Object, Codable {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var friend: CodablePet?
    @Persisted(originProperty: "pets") var owners: LinkingObjects<CodableOwner>
}

final class CodableAddress: EmbeddedObject, Codable {
    @Persisted var city = ""
    @Persisted var zip: Int?
}

final class CodableOwner: Object, Codable {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var pet: CodablePet?
    @Persisted var pets: List<CodablePet>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var maybes: List<Int?>
    @Persisted var address: CodableAddress?
    @Persisted var history: List<CodableAddress>
    @Persisted var extra: AnyRealmValue
}

/// Codable model classes (issue 26, point 3): the compiler's `init(from:)` through decodable
/// wrappers, and `encode(to:)` that reads every property through the object, so that live,
/// frozen and unmanaged objects encode alike.
@Suite struct CodableTests {
    static let classes: [Object.Type] = [CodableScalars.self, CodablePet.self, CodableAddress.self, CodableOwner.self]

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try encoder().encode(value), as: UTF8.self)
    }

    static func scalars() throws -> CodableScalars {
        let s = CodableScalars()
        s.id = 7
        s.bool = true
        s.int = -9_000_000_000
        s.int8 = -8
        s.int16 = 1_600
        s.int32 = -320_000
        s.int64 = .max
        s.float = 1.5
        s.double = -2.25
        s.string = "héllo \"quoted\"\n"
        s.data = Data([0, 1, 2, 255])
        s.date = Date(timeIntervalSince1970: 1_700_000_000.5)
        s.decimal = try Decimal128(string: "123.456")
        s.objectId = try ObjectId(string: "65a1b2c3d4e5f60718293a4b")
        s.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        s.mixed = .string("mixed")
        s.mood = .glad
        s.optionalInt = 5
        s.optionalString = nil
        s.optionalDate = Date(timeIntervalSince1970: 86_400)
        s.optionalObjectId = nil
        s.optionalMood = .calm
        return s
    }

    static func owner() -> CodableOwner {
        let rex = CodablePet()
        rex.name = "Rex"
        let tom = CodablePet()
        tom.name = "Tom"
        tom.friend = rex
        let owner = CodableOwner()
        owner.name = "Ann"
        owner.pet = tom
        owner.pets.append(objectsIn: [rex, tom])
        owner.tags.insert(objectsIn: ["b", "a"])
        owner.scores["math"] = 3
        owner.scores["art"] = -1
        owner.maybes.append(objectsIn: [1, nil, 3])
        let home = CodableAddress()
        home.city = "Oslo"
        home.zip = 150
        owner.address = home
        let old = CodableAddress()
        old.city = "Bergen"
        owner.history.append(old)
        owner.extra = .int(42)
        return owner
    }

    @Test func everyScalarTypeRoundTripsThroughJSON() throws {
        let original = try Self.scalars()
        let json = try Self.json(original)
        let decoded = try JSONDecoder().decode(CodableScalars.self, from: Data(json.utf8))
        #expect(decoded.realm == nil)
        #expect(decoded.id == 7 && decoded.bool && decoded.int == -9_000_000_000 && decoded.int8 == -8 && decoded.int16 == 1_600)
        #expect(decoded.int32 == -320_000 && decoded.int64 == .max && decoded.float == 1.5 && decoded.double == -2.25)
        #expect(decoded.string == original.string && decoded.data == original.data && decoded.date == original.date)
        #expect(decoded.decimal == original.decimal && decoded.objectId == original.objectId && decoded.uuid == original.uuid)
        #expect(decoded.mixed == .string("mixed") && decoded.mood == .glad)
        #expect(decoded.optionalInt == 5 && decoded.optionalString == nil && decoded.optionalDate == original.optionalDate)
        #expect(decoded.optionalObjectId == nil && decoded.optionalMood == .calm)
        #expect(try Self.json(decoded) == json)

        // Stored and read back, live and frozen, it encodes the same.
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration(Self.classes))
        try realm.write { realm.add(decoded) }
        let stored = try #require(realm.object(ofType: CodableScalars.self, forPrimaryKey: 7))
        #expect(try Self.json(stored) == json)
        #expect(try Self.json(stored.freeze()) == json)
    }

    @Test func aGraphOfLinksCollectionsAndEmbeddedObjectsEncodesLiveFrozenAndUnmanagedAlike() throws {
        let owner = Self.owner()
        let unmanaged = try Self.json(owner)
        // Links are nested objects, LinkingObjects are left out, a map is a JSON object.
        #expect(unmanaged.contains(#""friend":{"friend":null,"name":"Rex"}"#))
        #expect(!unmanaged.contains("owners"))
        #expect(unmanaged.contains(#""scores":{"#) && unmanaged.contains(#""maybes":[1,null,3]"#))

        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration(Self.classes))
        try realm.write { realm.add(owner) }
        let live = try #require(realm.object(ofType: CodableOwner.self, forPrimaryKey: "Ann"))
        let frozen = live.freeze()
        for json in [try Self.json(live), try Self.json(frozen), try Self.json(owner)] {
            let decoded = try JSONDecoder().decode(CodableOwner.self, from: Data(json.utf8))
            #expect(decoded.name == "Ann" && decoded.pet?.name == "Tom" && decoded.pet?.friend?.name == "Rex")
            #expect(decoded.pets.map(\.name) == ["Rex", "Tom"] && Set(decoded.tags) == ["a", "b"])
            #expect(decoded.scores["math"] == 3 && decoded.scores["art"] == -1 && decoded.scores.count == 2)
            #expect(Array(decoded.maybes) == [1, nil, 3])
            #expect(decoded.address?.city == "Oslo" && decoded.address?.zip == 150 && decoded.history.map(\.city) == ["Bergen"])
            #expect(decoded.extra == .int(42))
        }
        // A set's and a map's order is theirs; everything else encodes identically.
        let normalise = { (json: String) throws -> NSDictionary in
            try JSONSerialization.jsonObject(with: Data(json.utf8)) as! NSDictionary
        }
        let expected = try normalise(unmanaged)
        #expect(try normalise(try Self.json(live))["pets"] as? NSArray == expected["pets"] as? NSArray)
        #expect(try normalise(try Self.json(frozen))["address"] as? NSDictionary == expected["address"] as? NSDictionary)
        #expect(try normalise(try Self.json(live))["scores"] as? NSDictionary == expected["scores"] as? NSDictionary)
    }

    @Test func decodedObjectsAreAddedLikeAnyOther() throws {
        let json = try Self.json(Self.owner())
        let decoded = try JSONDecoder().decode(CodableOwner.self, from: Data(json.utf8))
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration(Self.classes))
        // Rex comes twice (a pet, and Tom's friend), as two decoded instances: as with any two
        // objects of one primary key, `.error` refuses the second and `.modified` merges them.
        #expect(throws: Realm.Error.self) { try realm.write { realm.add(decoded) } }
        #expect(realm.objects(CodablePet.self).isEmpty)
        // (The objects of the undone write are invalidated, as in Realm Swift: decode anew.)
        let fresh = try JSONDecoder().decode(CodableOwner.self, from: Data(json.utf8))
        try realm.write { realm.add(fresh, update: .modified) }
        #expect(realm.objects(CodablePet.self).count == 2)
        let rex = try #require(realm.object(ofType: CodablePet.self, forPrimaryKey: "Rex"))
        #expect(rex.owners.map(\.name) == ["Ann"])
        // Decoding again and adding with .modified updates by primary key.
        let again = try JSONDecoder().decode(CodableOwner.self, from: Data(json.replacingOccurrences(of: "Oslo", with: "Tromsø").utf8))
        try realm.write { realm.add(again, update: .modified) }
        #expect(realm.objects(CodableOwner.self).count == 1)
        #expect(realm.object(ofType: CodableOwner.self, forPrimaryKey: "Ann")?.address?.city == "Tromsø")
    }

    @Test func missingKeysAreNilOrEmptyOnlyWhereThePropertyAllowsIt() throws {
        let decoded = try JSONDecoder().decode(CodableOwner.self, from: Data(#"{"name":"Bo","address":null}"#.utf8))
        #expect(decoded.name == "Bo" && decoded.pet == nil && decoded.pets.isEmpty && decoded.tags.isEmpty)
        #expect(decoded.scores.count == 0 && decoded.address == nil && decoded.extra == .none)
        // A missing non-optional property is the request's error, named.
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CodableOwner.self, from: Data(#"{"pets":[]}"#.utf8)) }
        // So is a value of the wrong type.
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CodableOwner.self, from: Data(#"{"name":5}"#.utf8)) }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(CodableScalars.self, from: Data(#"{"id":1,"int8":300}"#.utf8)) }
    }

    @Test func aCycleOfLinksOrADeepChainThrowsInsteadOfExhaustingTheStack() throws {
        let a = CodablePet()
        a.name = "a"
        let b = CodablePet()
        b.name = "b"
        a.friend = b
        b.friend = a
        #expect(throws: EncodingError.self) { try Self.json(a) }

        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration(Self.classes))
        try realm.write { realm.add(a) }
        let stored = try #require(realm.object(ofType: CodablePet.self, forPrimaryKey: "a"))
        #expect(throws: EncodingError.self) { try Self.json(stored) }

        // A chain longer than the limit, with no cycle.
        try realm.write {
            var next: CodablePet?
            for i in 0..<(Object.maximumEncodingDepth + 10) {
                let pet = CodablePet()
                pet.name = "chain-\(i)"
                pet.friend = next
                realm.add(pet)
                next = pet
            }
        }
        let head = try #require(realm.object(ofType: CodablePet.self, forPrimaryKey: "chain-\(Object.maximumEncodingDepth + 9)"))
        #expect(throws: EncodingError.self) { try Self.json(head) }
        let short = try #require(realm.object(ofType: CodablePet.self, forPrimaryKey: "chain-20"))
        #expect(try Self.json(short).contains("chain-0"))
        // The realm still serves.
        #expect(realm.objects(CodablePet.self).count == Object.maximumEncodingDepth + 12)
    }

    @Test func aDeletedObjectIsAnEncodingErrorNotACrash() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration(Self.classes))
        let pet = CodablePet()
        pet.name = "gone"
        try realm.write { realm.add(pet) }
        try realm.write { realm.delete(pet) }
        #expect(throws: EncodingError.self) { try Self.json(pet) }
    }
}
