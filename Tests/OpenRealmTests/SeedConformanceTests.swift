import Foundation
import Testing
import OpenRealm

// The seed documents' Swift model and write examples (004: object models, property
// declarations, primary keys, indexes; 002: adding objects), with only the import changed.
// Each model is wrapped in an enum so that the seeds' class names do not clash with the
// other tests' models.

enum Seed004 {
    // A dog has an _id primary key, a string name, an optional
    // string breed, and a date of birth.
    class Dog: Object {
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var name = ""
        @Persisted var breed: String?
        @Persisted var dateOfBirth = Date()
    }

    class Person: Object {
        // Required string property
        @Persisted var name = ""
        // Optional string property
        @Persisted var address: String?
        // Required numeric property
        @Persisted var ageYears = 0
        // Optional numeric property
        @Persisted var heightCm: Float?
    }

    class Project: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
    }

    class Book: Object {
        @Persisted var priceCents = 0
        @Persisted(indexed: true) var title = ""
    }
}

@Suite(.serialized) struct SeedConformanceTests {
    @Test func theSeedModelsDeclareTheirSchemas() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Seed004.Dog.self, Seed004.Person.self, Seed004.Project.self, Seed004.Book.self]))
        try realm.write {
            let dog = Seed004.Dog()
            dog._id = ObjectId.generate()
            dog.name = "Rex"
            realm.add(dog)
            let person = Seed004.Person()
            person.name = "Ann"
            person.heightCm = 170.5
            realm.add(person)
            let project = Seed004.Project()
            project.id = 1
            project.name = "Launch"
            realm.add(project)
            let book = Seed004.Book()
            book.title = "Swift"
            realm.add(book)
        }
        #expect(realm.objects(Seed004.Dog.self).first?.breed == nil)
        #expect(realm.objects(Seed004.Person.self).first?.heightCm == 170.5)
        #expect(realm.object(ofType: Seed004.Project.self, forPrimaryKey: 1)?.name == "Launch")
        #expect(realm.objects(Seed004.Book.self).first?.title == "Swift")
    }

    /// Seed 002's first steps: `try! Realm()` with the default configuration, then `write`
    /// and `add`.
    @Test func theDefaultRealmWorksLikeTheSeedsUseIt() throws {
        let folder = TestFolder()
        let saved = Realm.Configuration.defaultConfiguration
        defer { Realm.Configuration.defaultConfiguration = saved }
        Realm.Configuration.defaultConfiguration = Realm.Configuration(fileURL: folder.url.appendingPathComponent("default.realm"))

        let realm = try! Realm()
        let person = Seed004.Person()
        person.name = "Jane"
        try! realm.write {
            realm.add(person)
        }
        try! realm.write {
            person.name = "Jane Doe"
        }
        #expect(try Realm().objects(Seed004.Person.self).first?.name == "Jane Doe")
    }
}
