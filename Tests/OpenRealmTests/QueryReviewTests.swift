import Foundation
import Testing
import TestSupport
@testable import OpenRealm

// Review of the query engine: each test shows one suspected bug (it fails while the bug is
// there).

/// A class with nullable indexed integer and date properties (none of the shared models has one).
final class ReviewGauge: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var level: Int?
    @Persisted(indexed: true) var seen: Date?
}

@Suite(.childProcesses) struct QueryReviewTests {
    // MARK: Index ranges and nil

    /// 100 gauges: 4 with nil level and date, the others with level 100… and dates far ahead.
    static func gauges(_ realm: Realm) throws {
        try realm.write {
            for i in 0..<100 {
                let g = ReviewGauge()
                g.id = i
                if i >= 4 {
                    g.level = 100 + i
                    g.seen = Date(timeIntervalSince1970: 1_000_000 + Double(i))
                }
                realm.add(g)
            }
        }
    }

    @Test func indexRangeBelowABoundLeavesOutNil() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([ReviewGauge.self]))
        try Self.gauges(realm)
        let gauges = realm.objects(ReviewGauge.self)
        // nil is never ordered: `level < 5` is false for a nil level.
        #expect(gauges.filter("level < 5").count == 0)
        #expect(gauges.filter("level <= 5").count == 0)
        #expect(gauges.filter("seen < %@", Date(timeIntervalSince1970: 10)).count == 0)
        // The same conditions evaluated object by object (an OR is never an index range).
        #expect(gauges.filter("level < 5 OR FALSEPREDICATE").count == 0)
    }

    // MARK: Object arguments

    @Test func anObjectOfAnotherClassMatchesNoLink() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        let ann = Rambler()
        ann.id = 0
        ann.name = "Ann"
        try realm.write {
            let rex = Hound()
            rex.name = "Rex"
            realm.add(rex)
            ann.favorite = rex
            ann.pets.append(rex)
            realm.add(ann)
        }
        let ramblers = realm.objects(Rambler.self)
        // Ann (a Rambler) is nobody's favorite Hound: either the query is refused or it matches nothing.
        let favorite = (try? ramblers.filter("favorite == %@", arguments: [ann]).count) ?? 0
        #expect(favorite == 0)
        let pets = (try? ramblers.filter("%@ IN pets", arguments: [ann]).count) ?? 0
        #expect(pets == 0)
    }

    // MARK: Aggregates

    @Test func maximumOfZerosIsTheSameOnEveryPath() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        try realm.write {
            for (i, score) in [0.0, -0.0].enumerated() {
                let r = Rambler()
                r.id = i
                r.score = score
                realm.add(r)
            }
        }
        let all = realm.objects(Rambler.self)
        let columnPath: Double? = all.max(ofProperty: "score")
        let objectPath: Double? = all.distinct(by: ["id"]).max(ofProperty: "score")
        #expect(columnPath == 0 && objectPath == 0)
        // Both keep the first of equal values (as min does): +0.
        #expect(columnPath?.sign == objectPath?.sign)
    }

    // MARK: Liveness

    @Test func queriesOnLinkingObjectsFollowNewLinks() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        let rex = Hound()
        rex.name = "Rex"
        try realm.write {
            let ann = Rambler()
            ann.id = 1
            ann.name = "Ann"
            ann.pets.append(rex)
            realm.add(ann)
        }
        let walkers = rex.walkers.filter("name != ''")
        #expect(walkers.count == 1)
        try realm.write {
            let bob = Rambler()
            bob.id = 2
            bob.name = "Bob"
            bob.pets.append(rex)
            realm.add(bob)
        }
        #expect(rex.walkers.count == 2)
        // "a query on `person.dogs` sees dogs appended after it was made" (Collection+Query.swift).
        #expect(walkers.count == 2)
    }

    // MARK: Strings compare by bytes

    @Test func distinctKeepsCanonicallyEquivalentStringsApart() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try realm.write {
            for name in ["\u{E9}", "e\u{301}"] {
                let dog = Dog()
                dog.name = name
                realm.add(dog)
            }
        }
        let dogs = realm.objects(Dog.self)
        // ValueComparison: "é" as one code point differs from "e" + a combining accent.
        #expect(dogs.filter("name == %@", "\u{E9}").count == 1)
        #expect(dogs.distinct(by: ["name"]).count == 2)
    }

    @Test func indexedInListKeepsCanonicallyEquivalentStrings() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Person.self]))
        try realm.write {
            for (id, email) in ["\u{E9}", "e\u{301}"].enumerated() {
                let p = Person()
                p.id = id
                p.email = email
                realm.add(p)
            }
        }
        let people = realm.objects(Person.self)
        let both: [String] = ["\u{E9}", "e\u{301}"]
        // Through the scan (an OR is never an index lookup): both.
        #expect(people.filter("email IN %@ OR FALSEPREDICATE", both).count == 2)
        // Through the index on email: the IN values are deduplicated with Swift's String ==.
        #expect(people.filter("email IN %@", both).count == 2)
        #expect(people.filter("email IN %@", both).map(\.id) == [0, 1])
    }

    @Test func distinctTreatsEqualNumbersOfAMixedPropertyAsOne() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Mixed.self]))
        try realm.write {
            for (id, value) in [AnyRealmValue.int(1), .double(1.0)].enumerated() {
                let m = Mixed()
                m.id = id
                m.value = value
                realm.add(m)
            }
        }
        let mixed = realm.objects(Mixed.self)
        // Queries say 1 == 1.0 …
        #expect(mixed.filter("value == 1").count == 2)
        // … distinct does not.
        #expect(mixed.distinct(by: ["value"]).count == 1)
    }

    // MARK: Recursion

    @Test func aTypeSafeOrOfManyValuesTrapsWithAClearMessage() async {
        // Deeper than string predicates may nest: refused with the rule, not a stack overflow.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try! Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
            let results = realm.objects(Rambler.self).where { q in
                let age = q.age
                return (1..<20_000).map { age == $0 }.reduce(age == 0, ||)
            }
            _ = results.count
        }
        MisuseTests.expectRule(result, "nests more than 1000 conditions")
    }

    @Test func aTypeSafeOrOfAThousandValuesWorks() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        try realm.write {
            for id in 0..<5 {
                let r = Rambler()
                r.id = id
                r.age = id
                realm.add(r)
            }
        }
        let results = realm.objects(Rambler.self).where { q in
            let age = q.age
            return (1..<999).map { age == $0 }.reduce(age == 0, ||)
        }
        #expect(results.count == 5)
    }
}
