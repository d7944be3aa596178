import Foundation
import RealmStorage
import Testing
import TestSupport
@testable import OpenRealm

/// Random datasets and thousands of generated predicates: each query's result must be the
/// objects for which the same condition, evaluated over plain Swift values, holds.
@Suite struct QueryOracleTests {
    /// The values of one `Rambler`, as plain Swift.
    struct Plain {
        var id: Int
        var name: String
        var age: Int
        var score: Double
        var nickname: String?
        var active: Bool
        var joined: Date
        var tags: [String]
        var pets: [(name: String, age: Int)]
        var favoriteAge: Int?
    }

    /// A predicate as a string with its arguments, and the same condition in Swift.
    struct Case {
        var format: String
        var arguments: [Any]
        var holds: (Plain) -> Bool
    }

    struct Generator {
        var random: SeededRandom
        let names = ["Ann", "anna", "Bob", "bobby", "Cy", "", "Zoe", "ann marie", "BOB", "Dan"]
        let tags = ["a", "ab", "b", "Ba", "c", ""]

        mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
        mutating func pick<T>(_ xs: [T]) -> T { xs[int(0...xs.count - 1)] }
        mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }

        mutating func plain(id: Int) -> Plain {
            Plain(id: id, name: pick(names), age: int(0...20), score: Double(int(-40...40)) / 4, nickname: chance(40) ? nil : pick(names),
                  active: chance(50), joined: Date(timeIntervalSince1970: Double(int(0...10)) * 86_400 + 0.5),
                  tags: (0..<int(0...3)).map { _ in pick(tags) }, pets: (0..<int(0...3)).map { _ in (pick(names), int(0...15)) },
                  favoriteAge: chance(30) ? nil : int(0...15))
        }

        // MARK: Predicates

        mutating func predicate(depth: Int = 0) -> Case {
            if depth < 2 && chance(45) {
                let a = predicate(depth: depth + 1), b = predicate(depth: depth + 1)
                switch int(0...2) {
                case 0: return Case(format: "(\(a.format)) AND (\(b.format))", arguments: a.arguments + b.arguments) { a.holds($0) && b.holds($0) }
                case 1: return Case(format: "(\(a.format)) OR (\(b.format))", arguments: a.arguments + b.arguments) { a.holds($0) || b.holds($0) }
                default: return Case(format: "NOT (\(a.format))", arguments: a.arguments) { !a.holds($0) }
                }
            }
            return comparison()
        }

        mutating func comparison() -> Case {
            switch int(0...15) {
            case 0: return integer("age", \.age, range: -1...21)
            case 1: return integer("id", \.id, range: -1...121)
            case 2: return number()
            case 3, 4: return text()
            case 5: return nickname()
            case 6:
                let b = chance(50)
                return Case(format: "active == \(b ? "true" : "NO")", arguments: []) { $0.active == b }
            case 7:
                let day = Date(timeIntervalSince1970: Double(int(0...10)) * 86_400)
                let (op, test) = order()
                return Case(format: "joined \(op) %@", arguments: [day]) { test(Self.order($0.joined, day)) }
            case 8: return tagsCase()
            case 9: return petsCase()
            case 10:
                let n = int(0...16)
                let (op, test) = order()
                return Case(format: "favorite.age \(op) \(n)", arguments: []) { p in p.favoriteAge.map { test(Self.order($0, n)) } ?? Self.holdsForNil(op) }
            case 11:
                let isNil = chance(50)
                return Case(format: "favorite \(isNil ? "==" : "!=") nil", arguments: []) { ($0.favoriteAge == nil) == isNil }
            case 12:
                let values = (0..<int(0...4)).map { _ in int(0...20) }
                return Case(format: "age IN %@", arguments: [values]) { values.contains($0.age) }
            case 13:
                let a = int(0...20), b = int(0...20)
                return Case(format: "age BETWEEN {\(a), \(b)}", arguments: []) { $0.age >= a && $0.age <= b }
            case 14:
                return chance(50) ? Case(format: "TRUEPREDICATE", arguments: []) { _ in true } : Case(format: "FALSEPREDICATE", arguments: []) { _ in false }
            default:
                // Constant on the left, and %K.
                let n = int(0...20)
                let (op, test) = order()
                return Case(format: "\(n) \(op) %K", arguments: ["age"]) { test(Self.order(n, $0.age)) }
            }
        }

        /// An operator and what it means for an order (-1, 0, 1).
        mutating func order() -> (String, (Int) -> Bool) {
            pick([("==", { $0 == 0 }), ("!=", { $0 != 0 }), ("<", { $0 < 0 }), ("<=", { $0 <= 0 }), (">", { $0 > 0 }), (">=", { $0 >= 0 }),
                  ("=", { $0 == 0 }), ("<>", { $0 != 0 })])
        }

        /// Whether `op` holds between nil and a value: only "not equal" does.
        static func holdsForNil(_ op: String) -> Bool { op == "!=" || op == "<>" }

        static func order<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

        mutating func integer(_ name: String, _ key: KeyPath<Plain, Int>, range: ClosedRange<Int>) -> Case {
            let n = int(range)
            let (op, test) = order()
            if chance(50) { return Case(format: "\(name) \(op) %@", arguments: [n]) { test(Self.order($0[keyPath: key], n)) } }
            return Case(format: "\(name) \(op) \(n)", arguments: []) { test(Self.order($0[keyPath: key], n)) }
        }

        mutating func number() -> Case {
            let (op, test) = order()
            if chance(50) {
                let n = int(-11...11)
                return Case(format: "score \(op) \(n)", arguments: []) { test(Self.order($0.score, Double(n))) }
            }
            let x = Double(int(-45...45)) / 4
            return Case(format: "score \(op) %@", arguments: [x]) { test(Self.order($0.score, x)) }
        }

        mutating func stringTest(_ text: String) -> (String, (String) -> Bool) {
            let folded = chance(40)
            let modifier = folded ? pick(["[c]", "[cd]"]) : pick(["", "[d]"])
            func f(_ s: String) -> String { folded ? s.lowercased() : s }
            let t = f(text)
            switch int(0...6) {
            case 0: return ("==\(modifier)", { f($0) == t })
            case 1: return ("!=\(modifier)", { f($0) != t })
            case 2: return ("BEGINSWITH\(modifier)", { f($0).hasPrefix(t) })
            case 3: return ("ENDSWITH\(modifier)", { f($0).hasSuffix(t) })
            case 4: return ("CONTAINS\(modifier)", { t.isEmpty || f($0).contains(t) })
            case 5:
                let pattern = pick(["*", "?", "a*", "*b", "?o*", "*n?", "B*b*", "*a*a*"])
                let p = f(pattern)
                return ("LIKE\(modifier) '\(pattern)' ", { Self.like(Array(f($0)), Array(p)) })
            default:
                // Ordering compares UTF-8 bytes, without modifiers.
                let less = chance(50)
                let bytes = Array(text.utf8)
                return (less ? "<" : ">=", { Array($0.utf8).lexicographicallyPrecedes(bytes) == less })
            }
        }

        mutating func text() -> Case {
            let value = pick(["a", "An", "ann", "b", "Bo", "", "o", "e", "Zoe", "ann marie"])
            let (op, test) = stringTest(value)
            if op.hasPrefix("LIKE") { return Case(format: "name \(op)", arguments: []) { test($0.name) } }
            return Case(format: "name \(op) %@", arguments: [value]) { test($0.name) }
        }

        mutating func nickname() -> Case {
            if chance(40) {
                let isNil = chance(50)
                return Case(format: "nickname \(isNil ? "==" : "!=") nil", arguments: []) { ($0.nickname == nil) == isNil }
            }
            let value = pick(["Ann", "Bob", "Zoe"])
            if chance(50) { return Case(format: "nickname == '\(value)'", arguments: []) { $0.nickname == value } }
            return Case(format: "nickname BEGINSWITH[c] %@", arguments: [value]) { $0.nickname?.lowercased().hasPrefix(value.lowercased()) ?? false }
        }

        mutating func tagsCase() -> Case {
            let tag = pick(tags)
            switch int(0...4) {
            case 0: return Case(format: "ANY tags == %@", arguments: [tag]) { $0.tags.contains(tag) }
            case 1: return Case(format: "ALL tags BEGINSWITH %@", arguments: [tag]) { $0.tags.allSatisfy { $0.hasPrefix(tag) } }
            case 2: return Case(format: "NONE tags == %@", arguments: [tag]) { !$0.tags.contains(tag) }
            case 3: return Case(format: "%@ IN tags", arguments: [tag]) { $0.tags.contains(tag) }
            default:
                let n = int(0...3)
                let (op, test) = order()
                return Case(format: "tags.@count \(op) \(n)", arguments: []) { test(Self.order($0.tags.count, n)) }
            }
        }

        mutating func petsCase() -> Case {
            let n = int(0...15)
            let (op, test) = order()
            switch int(0...6) {
            case 0: return Case(format: "ANY pets.age \(op) \(n)", arguments: []) { $0.pets.contains { test(Self.order($0.age, n)) } }
            case 1: return Case(format: "pets.age \(op) \(n)", arguments: []) { $0.pets.contains { test(Self.order($0.age, n)) } }
            case 2: return Case(format: "ALL pets.age \(op) \(n)", arguments: []) { $0.pets.allSatisfy { test(Self.order($0.age, n)) } }
            case 3:
                let m = int(0...3)
                return Case(format: "pets.@count \(op) \(m)", arguments: []) { test(Self.order($0.pets.count, m)) }
            case 4:
                let aggregate = pick(["@max", "@min", "@sum"])
                return Case(format: "pets.\(aggregate).age \(op) \(n)", arguments: []) { p in
                    let ages = p.pets.map(\.age)
                    switch aggregate {
                    case "@sum": return test(Self.order(ages.reduce(0, +), n))
                    case "@max": return ages.max().map { test(Self.order($0, n)) } ?? Self.holdsForNil(op)
                    default: return ages.min().map { test(Self.order($0, n)) } ?? Self.holdsForNil(op)
                    }
                }
            case 5:
                let m = int(0...2)
                return Case(format: "SUBQUERY(pets, $p, $p.age \(op) \(n) AND $p.name BEGINSWITH[c] 'a').@count >= \(m)", arguments: []) { p in
                    p.pets.filter { test(Self.order($0.age, n)) && $0.name.lowercased().hasPrefix("a") }.count >= m
                }
            default:
                let avg = Double(n) / 2
                return Case(format: "pets.@avg.age \(op) %@", arguments: [avg]) { p in
                    p.pets.isEmpty ? Self.holdsForNil(op) : test(Self.order(Double(p.pets.map(\.age).reduce(0, +)) / Double(p.pets.count), avg))
                }
            }
        }

        /// LIKE by recursion (the engine uses a different algorithm).
        static func like(_ text: [Character], _ pattern: [Character]) -> Bool {
            guard let first = pattern.first else { return text.isEmpty }
            if first == "*" { return (0...text.count).contains { like(Array(text[$0...]), Array(pattern.dropFirst())) } }
            guard let head = text.first, first == "?" || first == head else { return false }
            return like(Array(text.dropFirst()), Array(pattern.dropFirst()))
        }
    }

    static func fill(_ realm: Realm, _ plains: [Plain]) throws {
        try realm.write {
            for p in plains {
                let w = Rambler()
                w.id = p.id
                w.name = p.name
                w.age = p.age
                w.score = p.score
                w.nickname = p.nickname
                w.active = p.active
                w.joined = p.joined
                w.tags.append(objectsIn: p.tags)
                for pet in p.pets {
                    let dog = Hound()
                    dog.name = pet.name
                    dog.age = pet.age
                    w.pets.append(dog)
                }
                if let age = p.favoriteAge {
                    let dog = Hound()
                    dog.age = age
                    w.favorite = dog
                }
                realm.add(w)
            }
        }
    }

    @Test(arguments: [1, 2, 3])
    func generatedPredicatesSelectWhatSwiftSelects(seed: UInt64) throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        var generator = Generator(random: SeededRandom(seed: seed))
        let plains = (0..<120).map { generator.plain(id: $0) }
        try Self.fill(realm, plains)
        let all = realm.objects(Rambler.self)
        for _ in 0..<700 {
            let c = generator.predicate()
            let expected = plains.filter(c.holds).map(\.id)
            let results = try all.filter(c.format, arguments: c.arguments)
            // Counted first, while no keys are known: an index may answer alone.
            #expect(results.count == expected.count, "\(c.format) \(c.arguments)")
            let actual = results.map(\.id).sorted()
            #expect(actual == expected, "\(c.format) \(c.arguments)")
            if actual != expected { return }
        }
    }

    @Test func aggregatesOverSelectedObjectsMatchSwift() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        var generator = Generator(random: SeededRandom(seed: 5))
        var plains = (0..<150).map { generator.plain(id: $0) }
        try Self.fill(realm, plains)
        func check(_ results: Results<Rambler>, _ selected: [Plain], _ context: String) {
            let ages = selected.map(\.age), scores = selected.map(\.score)
            #expect(results.sum(ofProperty: "age") as Int == ages.reduce(0, +), "\(context)")
            #expect(results.sum(ofProperty: "score") as Double == scores.reduce(0, +), "\(context)")
            #expect(results.min(ofProperty: "age") as Int? == ages.min(), "\(context)")
            #expect(results.max(ofProperty: "score") as Double? == scores.max(), "\(context)")
            let average: Double? = results.average(ofProperty: "score")
            #expect(average == (scores.isEmpty ? nil : scores.reduce(0, +) / Double(scores.count)), "\(context)")
            let ageAverage: Double? = results.average(ofProperty: "age")
            #expect(ageAverage == (ages.isEmpty ? nil : ages.reduce(0.0) { $0 + Double($1) } / Double(ages.count)), "\(context)")
        }
        let cases = (0..<100).map { _ in generator.predicate() }
        for c in cases {
            check(try realm.objects(Rambler.self).filter(c.format, arguments: c.arguments), plains.filter(c.holds), c.format)
        }
        // Inside a write, changed leaves are read as values rather than column blocks.
        try realm.write {
            for i in stride(from: 0, to: plains.count, by: 4) {
                let w = realm.object(ofType: Rambler.self, forPrimaryKey: plains[i].id)!
                w.score += 1.25
                plains[i].score = w.score
            }
            for c in cases.prefix(30) {
                check(try realm.objects(Rambler.self).filter(c.format, arguments: c.arguments), plains.filter(c.holds), c.format)
            }
        }
    }

    @Test func floatingPointSumsAreTheSameHoweverTheValuesAreRead() throws {
        // Values whose sum depends on the order of the additions: every path must add them
        // the way LaneSum defines (whole blocks, selected rows, changed leaves, decoded values).
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        var random = SeededRandom(seed: 11)
        func lanes(_ values: [Double]) -> Double {
            var sum = LaneSum()
            for v in values { sum.add(v) }
            return sum.total
        }
        let scores = (0..<1_000).map { _ in Double.random(in: -1...1, using: &random) * pow(10, Double(Int.random(in: -3...16, using: &random))) }
        #expect(lanes(scores) != scores.reduce(0, +), "the values should make the order of additions matter")
        try realm.write {
            for (i, score) in scores.enumerated() {
                let w = Rambler()
                w.id = i
                w.score = score
                w.age = i % 3
                realm.add(w)
            }
        }
        let all = realm.objects(Rambler.self)
        #expect(all.sum(ofProperty: "score") as Double == lanes(scores))
        #expect(all.filter("age != 1").sum(ofProperty: "score") as Double == lanes(scores.indices.filter { $0 % 3 != 1 }.map { scores[$0] }))
        #expect(all.distinct(by: ["id"]).sum(ofProperty: "score") as Double == lanes(scores))
        realm.beginWrite()
        all.filter("id == 500").first!.score = 2.5
        var changed = scores
        changed[500] = 2.5
        #expect(all.sum(ofProperty: "score") as Double == lanes(changed))
        realm.cancelWrite()
    }

    @Test func resultsInsideAWriteSeeItsUncommittedChanges() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Rambler.self, Hound.self]))
        var generator = Generator(random: SeededRandom(seed: 9))
        var plains = (0..<60).map { generator.plain(id: $0) }
        try Self.fill(realm, plains)
        let cases = (0..<150).map { _ in generator.predicate() }
        let queries = try cases.map { try realm.objects(Rambler.self).filter($0.format, arguments: $0.arguments) }
        try realm.write {
            for i in stride(from: 0, to: plains.count, by: 3) {
                let w = realm.object(ofType: Rambler.self, forPrimaryKey: plains[i].id)!
                w.age = (w.age + 7) % 21
                w.name = w.name + "a"
                plains[i].age = w.age
                plains[i].name = w.name
            }
            for (c, query) in zip(cases, queries) {
                #expect(query.count == plains.filter(c.holds).count, "\(c.format)")
                #expect(query.map(\.id).sorted() == plains.filter(c.holds).map(\.id), "\(c.format)")
            }
        }
        for (c, query) in zip(cases, queries) {
            #expect(query.map(\.id).sorted() == plains.filter(c.holds).map(\.id), "\(c.format)")
        }
    }
}
