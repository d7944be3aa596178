import Foundation
import Testing
@testable import OpenRealm

// Issue 24: an update by primary key never loses a field, the update policy reaches every
// object of a graph, and JSONSerialization's output goes to `create` as it is.

final class Item: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = "Title"
    @Persisted var price = 0.0
    @Persisted var note: String?
    @Persisted var tags: List<String>
    @Persisted var vendor: Vendor?
}

final class Vendor: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var city = "Oslo"
    @Persisted var rating = 0
}

final class Crate: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var items: List<Item>
    @Persisted var main: Item?
}

/// Every property type a JSON document can carry, as `JSONSerialization` hands them over.
final class Reading: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var double = 0.0
    @Persisted var float: Float = 0
    @Persisted var bool = false
    @Persisted var string = ""
    @Persisted var optInt: Int?
    @Persisted var optDouble: Double?
    @Persisted var optBool: Bool?
    @Persisted var optString: String?
    @Persisted var size: Size?
    @Persisted var mood = Mood.calm
    @Persisted var mixed: AnyRealmValue
    @Persisted var samples: List<Double>
    @Persisted var labels: MutableSet<String>
    @Persisted var limits: Map<String, Int>
    @Persisted var vendor: Vendor?
    @Persisted var place: Address?
    @Persisted var vendors: List<Vendor>
}

@Suite struct CreateUpdateTests {
    /// Item 1 with a value in every property, made the way an app would.
    private static func seedItem(_ realm: Realm) throws {
        try realm.write {
            realm.create(Item.self, value: [
                "id": 1, "title": "Lamp", "price": 12.5, "note": "fragile", "tags": ["home", "light"],
                "vendor": ["name": "Acme", "city": "Bergen", "rating": 5],
            ])
        }
    }

    private static func expectUntouched(_ item: Item?, price: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(item?.title == "Lamp", sourceLocation: sourceLocation)
        #expect(item?.price == price, sourceLocation: sourceLocation)
        #expect(item?.note == "fragile", sourceLocation: sourceLocation)
        #expect(item.map { Array($0.tags) } == ["home", "light"], sourceLocation: sourceLocation)
        #expect(item?.vendor?.name == "Acme" && item?.vendor?.city == "Bergen", sourceLocation: sourceLocation)
    }

    @Test(arguments: [Realm.UpdatePolicy.modified, .all])
    func aPartialDictionaryChangesOnlyTheGivenProperties(policy: Realm.UpdatePolicy) throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            try Self.seedItem(realm)
            let updated = try realm.write { realm.create(Item.self, value: ["id": 1, "price": 9000], update: policy) }
            Self.expectUntouched(updated, price: 9000)
            #expect(realm.objects(Item.self).count == 1)
        }
        let realm = try Realm(configuration: folder.configuration())
        Self.expectUntouched(realm.object(ofType: Item.self, forPrimaryKey: 1), price: 9000)
        try RoundTripTests.verify(folder)
    }

    @Test func aNestedDictionaryChangesOnlyTheGivenFieldsOfAnExistingTarget() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.seedItem(realm)
        try realm.write {
            realm.create(Item.self, value: ["id": 2, "vendor": ["name": "Acme", "rating": 4]], update: .modified)
            realm.create(Crate.self, value: ["id": 1, "items": [["id": 1, "price": 3]], "main": ["id": 1, "title": "Lamp"]],
                         update: .modified)
        }
        let acme = try #require(realm.object(ofType: Vendor.self, forPrimaryKey: "Acme"))
        #expect(acme.city == "Bergen" && acme.rating == 4)
        #expect(realm.objects(Vendor.self).count == 1)
        Self.expectUntouched(realm.object(ofType: Item.self, forPrimaryKey: 1), price: 3)
        #expect(realm.object(ofType: Crate.self, forPrimaryKey: 1)?.items.first?.id == 1)
        // A new object takes its defaults for what the dictionary leaves out.
        #expect(realm.object(ofType: Item.self, forPrimaryKey: 2)?.title == "Title")
        try RoundTripTests.verify(folder)
    }

    @Test func aNewObjectFromAPartialDictionaryTakesItsDefaults() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let item = try realm.write { realm.create(Item.self, value: ["id": 5, "price": 1], update: .modified) }
        #expect(item.title == "Title" && item.note == nil && item.tags.isEmpty && item.vendor == nil)
        try RoundTripTests.verify(folder)
    }

    @Test func anArrayValueSetsEveryProperty() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.seedItem(realm)
        let item = try realm.write {
            realm.create(Item.self, value: [1, "Desk", 80.0, nil, [] as [String], nil] as [Any?], update: .modified)
        }
        #expect(item.title == "Desk" && item.price == 80 && item.note == nil)
        #expect(item.tags.isEmpty)
        #expect(item.vendor == nil)
        try RoundTripTests.verify(folder)
    }

    @Test func nullClearsAnOptionalAndKeepsTheRest() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.seedItem(realm)
        let item = try realm.write {
            realm.create(Item.self, value: ["id": 1, "note": NSNull(), "vendor": NSNull()], update: .modified)
        }
        #expect(item.note == nil && item.vendor == nil)
        #expect(item.title == "Lamp" && Array(item.tags) == ["home", "light"])
        try RoundTripTests.verify(folder)
    }

    @Test(arguments: [Realm.UpdatePolicy.modified, .all])
    func addingAParentUpsertsItsChildrenWithTheSamePolicy(policy: Realm.UpdatePolicy) throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.seedItem(realm)
        let crate = Crate()
        crate.id = 1
        let lamp = Item()
        lamp.id = 1
        lamp.title = "Lamp v2"
        lamp.vendor = Vendor(value: ["name": "Acme", "city": "Tromsø"])
        let desk = Item()
        desk.id = 2
        desk.title = "Desk"
        crate.items.append(objectsIn: [lamp, desk])
        crate.main = lamp
        try realm.write { realm.add(crate, update: policy) }
        #expect(realm.objects(Item.self).count == 2)
        #expect(realm.objects(Vendor.self).count == 1)
        #expect(realm.object(ofType: Item.self, forPrimaryKey: 1)?.title == "Lamp v2")
        #expect(realm.object(ofType: Vendor.self, forPrimaryKey: "Acme")?.city == "Tromsø")
        #expect(crate.items.map(\.id) == [1, 2] && crate.main?.id == 1)
        #expect(lamp.realm === realm && desk.realm === realm)
        try RoundTripTests.verify(folder)
    }

    @Test func jsonSerializationOutputFillsEveryPropertyType() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let json = """
            {"id": 7, "int8": -8, "int32": 70000, "int64": 9007199254740993, "double": 2, "float": 1.5,
             "bool": true, "string": "ok", "optInt": 3, "optDouble": 0.25, "optBool": false, "optString": "s",
             "size": 9, "mood": "grumpy", "mixed": 12, "samples": [1, 2.5], "labels": ["a", "b", "a"],
             "limits": {"low": 1, "high": 10}, "vendor": {"name": "Acme", "rating": 3},
             "place": {"street": "Main", "city": "Oslo"}, "vendors": [{"name": "Bolt"}], "unknown": [1, {"x": null}]}
            """
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let reading = try realm.write { realm.create(Reading.self, value: value, update: .modified) }
        #expect(reading.id == 7 && reading.int8 == -8 && reading.int32 == 70000 && reading.int64 == 9_007_199_254_740_993)
        #expect(reading.double == 2 && reading.float == 1.5 && reading.bool && reading.string == "ok")
        #expect(reading.optInt == 3 && reading.optDouble == 0.25 && reading.optBool == false && reading.optString == "s")
        #expect(reading.size == .large && reading.mood == .grumpy && reading.mixed == .int(12))
        #expect(Array(reading.samples) == [1, 2.5] && Set(reading.labels) == ["a", "b"])
        #expect(reading.limits["low"] == 1 && reading.limits["high"] == 10)
        #expect(reading.vendor?.rating == 3 && reading.place?.street == "Main" && reading.vendors.map(\.name) == ["Bolt"])

        let nulls = """
            {"id": 7, "optInt": null, "optDouble": null, "optBool": null, "optString": null, "size": null,
             "mixed": null, "vendor": null, "place": null}
            """
        let cleared = try realm.write {
            realm.create(Reading.self, value: try JSONSerialization.jsonObject(with: Data(nulls.utf8)), update: .modified)
        }
        #expect(cleared.optInt == nil && cleared.optDouble == nil && cleared.optBool == nil && cleared.optString == nil)
        #expect(cleared.size == nil && cleared.mixed == .none && cleared.vendor == nil && cleared.place == nil)
        #expect(cleared.string == "ok" && cleared.vendors.count == 1)
        #expect(realm.objects(Vendor.self).count == 2)
        try RoundTripTests.verify(folder)
    }

    @Test func jsonNullCreatesANewObjectWithNilOptionals() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let value = try JSONSerialization.jsonObject(with: Data(#"[{"id": 1, "note": null, "vendor": null, "tags": ["x"]}]"#.utf8))
        let items = try #require(value as? [Any])
        let item = try realm.write { realm.create(Item.self, value: items[0]) }
        #expect(item.note == nil && item.vendor == nil && Array(item.tags) == ["x"])
        try RoundTripTests.verify(folder)
    }
}
