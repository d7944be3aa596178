import Foundation
import Testing
@testable import OpenRealm

// Issue 24, point 4: a model's properties come from the fields the compiler recorded, not from
// `Mirror`, which a model may replace (`CustomReflectable`), nor from layout rules re-derived
// by hand.

/// A model that shows `Mirror` something else than its properties.
final class Reflected: Object, CustomReflectable {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var tags: List<String>
    var customMirror: Mirror { Mirror(self, children: ["shown": "not the model"]) }
}

/// A subclass of a model, with fields of its own after its superclass's and a plain stored
/// property between the wrappers.
class Base: Object {
    @Persisted(primaryKey: true) var id = 0
    var scratch: (Int8, Double) = (1, 2)
    @Persisted var name = ""
}

final class Derived: Base {
    var flag = true
    @Persisted var score = 0.0
    @Persisted var note: String?
}

@Suite struct ModelFieldTests {
    @Test func aModelWhoseMirrorShowsNoPropertiesStoresThemAll() throws {
        let folder = TestFolder()
        var configuration = folder.configuration()
        configuration.objectTypes = [Reflected.self]
        let realm = try Realm(configuration: configuration)
        let schema = try ObjectSchema.of(Reflected.self)
        #expect(schema.properties.map(\.name) == ["id", "title", "tags"])
        try realm.write {
            let made = Reflected()
            made.id = 1
            made.title = "kept"
            made.tags.append("a")
            realm.add(made)
            realm.create(Reflected.self, value: ["id": 2, "title": "created", "tags": ["b", "c"]])
        }
        #expect(realm.object(ofType: Reflected.self, forPrimaryKey: 1)?.title == "kept")
        #expect(realm.object(ofType: Reflected.self, forPrimaryKey: 1).map { Array($0.tags) } == ["a"])
        #expect(realm.object(ofType: Reflected.self, forPrimaryKey: 2)?.title == "created")
        try realm.write { realm.object(ofType: Reflected.self, forPrimaryKey: 2)!.title = "changed" }
        #expect(realm.objects(Reflected.self).filter("title == 'changed'").count == 1)
    }

    @Test func aSubclassKeepsItsSuperclassPropertiesFirstWhateverLiesBetweenThem() throws {
        let folder = TestFolder()
        var configuration = folder.configuration()
        configuration.objectTypes = [Derived.self]
        let realm = try Realm(configuration: configuration)
        #expect(try ObjectSchema.of(Derived.self).properties.map(\.name) == ["id", "name", "score", "note"])
        try realm.write { realm.create(Derived.self, value: ["id": 7, "name": "seven", "score": 7.5, "note": "n"]) }
        let read = try #require(realm.object(ofType: Derived.self, forPrimaryKey: 7))
        #expect(read.name == "seven" && read.score == 7.5 && read.note == "n")
        #expect(read.scratch.0 == 1 && read.flag)
    }
}
