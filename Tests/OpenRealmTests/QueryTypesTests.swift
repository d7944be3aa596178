import Foundation
import Testing
import TestSupport
@testable import OpenRealm

/// Every property type in predicates: each comparison with each constant of a pool, checked
/// against the same comparison of the Swift values.
@Suite struct QueryTypesTests {
    /// One property: the values objects get, and how two of them order (nil: unordered).
    struct Property {
        var name: String
        var pool: [Any?]
        var order: (Any, Any) -> Int?
        /// Whether <, <=, >, >= and BETWEEN apply.
        var ordered = true
    }

    static func compare<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    static func typed<T: Comparable>(_: T.Type) -> (Any, Any) -> Int? {
        { a, b in compare(a as! T, b as! T) }
    }

    static func floating<T: BinaryFloatingPoint>(_: T.Type) -> (Any, Any) -> Int? {
        { a, b in
            let x = a as! T, y = b as! T
            return x.isNaN || y.isNaN ? nil : compare(x, y)
        }
    }

    static func bytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
    }

    /// Mixed values: numbers with numbers by value, strings by bytes, booleans false < true,
    /// anything else only with its own type.
    static func mixedOrder(_ a: Any, _ b: Any) -> Int? {
        func number(_ v: AnyRealmValue) -> Double? {
            switch v {
            case .int(let i): return Double(i)
            case .double(let d): return d
            case .float(let f): return Double(f)
            case .decimal128(let d): return d.doubleValue
            default: return nil
            }
        }
        let x = a as! AnyRealmValue, y = b as! AnyRealmValue
        if let p = number(x), let q = number(y) { return p.isNaN || q.isNaN ? nil : compare(p, q) }
        switch (x, y) {
        case (.string(let s), .string(let t)): return bytes(Array(s.utf8), Array(t.utf8))
        case (.bool(let s), .bool(let t)): return s == t ? 0 : (!s ? -1 : 1)
        case (.uuid(let s), .uuid(let t)): return s == t ? 0 : nil
        default: return nil
        }
    }

    static let day = 86_400.0
    static var properties: [Property] { [
        Property(name: "bool", pool: [true, false, nil], order: { a, b in (a as! Bool) == (b as! Bool) ? 0 : nil }, ordered: false),
        Property(name: "int", pool: [Int.min, -1, 0, 7, Int.max, nil] as [Int?], order: typed(Int.self)),
        Property(name: "int8", pool: [Int8.min, Int8(0), Int8(5), Int8.max, nil], order: typed(Int8.self)),
        Property(name: "int16", pool: [Int16.min, Int16(-3), Int16(300), nil], order: typed(Int16.self)),
        Property(name: "int32", pool: [Int32.max, Int32(-70_000), Int32(2), nil], order: typed(Int32.self)),
        Property(name: "int64", pool: [Int64.min, Int64(1 << 53 + 1), Int64(42), nil], order: typed(Int64.self)),
        Property(name: "float", pool: [Float(1.5), Float(-0.0), Float.infinity, Float.nan, Float(1e-3), nil], order: floating(Float.self)),
        Property(name: "double", pool: [0.1, -2.5, Double.nan, -Double.infinity, 1e300, 9_007_199_254_740_993.0, nil], order: floating(Double.self)),
        Property(name: "string", pool: ["", "a", "B", "é", "e\u{301}", "straße", "Zebra", nil],
                 order: { a, b in bytes(Array((a as! String).utf8), Array((b as! String).utf8)) }),
        Property(name: "data", pool: [Data(), Data([1, 2]), Data([1]), Data([255, 0]), nil],
                 order: { a, b in bytes(Array(a as! Data), Array(b as! Data)) == 0 ? 0 : nil }, ordered: false),
        Property(name: "date", pool: [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -5 * day + 0.25),
                                      Date(timeIntervalSince1970: 3 * day), Date(timeIntervalSince1970: 1e11), nil], order: typed(Date.self)),
        Property(name: "decimal", pool: [Decimal128(0 as Int64), Decimal128(-3 as Int64), try! Decimal128(string: "2.5"), try! Decimal128(string: "1e30"), nil],
                 order: typed(Decimal128.self)),
        Property(name: "objectId", pool: [ObjectId(), try! ObjectId(string: "0000000000000000000000ff"), try! ObjectId(string: "ff0000000000000000000000"), nil],
                 order: typed(ObjectId.self)),
        Property(name: "uuid", pool: [UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, UUID(uuidString: "F0000000-0000-0000-0000-000000000000")!, nil],
                 order: { a, b in
                     let x = withUnsafeBytes(of: (a as! UUID).uuid, Array.init), y = withUnsafeBytes(of: (b as! UUID).uuid, Array.init)
                     return bytes(x, y)
                 }),
        Property(name: "tide", pool: [Tide.slack, Tide.lowest, Tide.highest, nil], order: { a, b in compare((a as! Tide).rawValue, (b as! Tide).rawValue) }),
        Property(name: "weather", pool: [Weather.clear, Weather.unnamed, Weather.blizzard, nil],
                 order: { a, b in bytes(Array((a as! Weather).rawValue.utf8), Array((b as! Weather).rawValue.utf8)) }),
    ] }

    static var operators: [(String, (Int?) -> Bool, Bool)] { [
        ("==", { $0 == 0 }, false), ("!=", { $0 != 0 }, false),
        ("<", { $0 == -1 }, true), ("<=", { $0 == -1 || $0 == 0 }, true), (">", { $0 == 1 }, true), (">=", { $0 == 1 || $0 == 0 }, true),
    ] }

    /// Whether `op` holds between two Swift values (nil is nil): nil equals only nil and is
    /// never ordered.
    static func holds(_ test: (Int?) -> Bool, _ isEquality: Bool, _ a: Any?, _ b: Any?, _ property: Property) -> Bool {
        switch (a, b) {
        case (nil, nil): return test(0) && isEquality
        case (nil, _), (_, nil): return test(nil) && isEquality
        case (let x?, let y?): return test(property.order(x, y))
        }
    }

    @Test func everyTypeComparesAsItsSwiftValues() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([EveryOptionalScalar.self]))
        var random = SeededRandom(seed: 3)
        var rows: [[Int]] = []
        try realm.write {
            for id in 0..<60 {
                var value: [String: Any] = ["id": id]
                var picks: [Int] = []
                for property in Self.properties {
                    let pick = Int.random(in: 0..<property.pool.count, using: &random)
                    picks.append(pick)
                    if let v = property.pool[pick] { value[property.name] = v }
                }
                rows.append(picks)
                realm.create(EveryOptionalScalar.self, value: value)
            }
        }
        let all = realm.objects(EveryOptionalScalar.self)
        for (p, property) in Self.properties.enumerated() {
            for constant in property.pool {
                for (op, test, ordering) in Self.operators where !ordering || property.ordered {
                    if constant == nil && ordering { continue }
                    let expected = rows.indices.filter { Self.holds(test, !ordering, property.pool[rows[$0][p]], constant, property) }
                    let format = constant == nil ? "\(property.name) \(op) nil" : "\(property.name) \(op) %@"
                    let actual = try all.filter(format, arguments: constant.map { [$0] } ?? []).map(\.id)
                    #expect(actual == expected, "\(format) \(constant.map { "\($0)" } ?? "nil")")
                }
            }
            // IN with the first two constants of the pool.
            let choices = Array(property.pool.prefix(2))
            let expected = rows.indices.filter { i in choices.contains { Self.holds({ $0 == 0 }, true, property.pool[rows[i][p]], $0, property) } }
            #expect(try all.filter("\(property.name) IN %@", arguments: [choices]).map(\.id) == expected, "\(property.name) IN")
        }
    }

    @Test func mixedValuesCompareAcrossNumericTypes() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([EveryScalar.self]))
        let pool: [AnyRealmValue] = [.none, .int(1), .double(1.0), .float(2.5), .decimal128(Decimal128(1 as Int64)), .string("a"), .string("B"),
                                     .bool(true), .bool(false), .double(.nan), .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!)]
        try realm.write {
            for (id, mixed) in pool.enumerated() { realm.create(EveryScalar.self, value: ["id": id, "mixed": mixed]) }
        }
        let all = realm.objects(EveryScalar.self)
        let property = Property(name: "mixed", pool: [], order: Self.mixedOrder)
        for constant in pool {
            for (op, test, ordering) in Self.operators {
                let isNil: Bool = { if case .none = constant { true } else { false } }()
                if isNil && ordering { continue }
                let expected = pool.indices.filter { i in
                    let a: Any? = { if case .none = pool[i] { nil } else { pool[i] } }()
                    return Self.holds(test, !ordering, a, isNil ? nil : constant, property)
                }
                let actual = try all.filter("mixed \(op) %@", arguments: [isNil ? NSNull() as Any : constant]).map(\.id)
                #expect(actual == expected, "mixed \(op) \(constant)")
            }
        }
        #expect(all.filter("mixed == 1").map(\.id) == [1, 2, 4])
        #expect(all.filter("mixed BEGINSWITH[c] 'b'").map(\.id) == [6])
    }

    @Test func caseAndDiacriticsFoldBeyondASCII() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try realm.write {
            for name in ["Étoile", "etoile", "ÉTOILE", "Straße", "STRASSE", "Ørsted", "Kelvin", "\u{212A}elvin"] {
                let dog = Dog()
                dog.name = name
                realm.add(dog)
            }
        }
        let dogs = realm.objects(Dog.self)
        #expect(dogs.filter("name BEGINSWITH[d] 'e'").map(\.name) == ["etoile"] + [])
        #expect(dogs.filter("name ==[cd] 'etoile'").map(\.name) == ["Étoile", "etoile", "ÉTOILE"])
        #expect(dogs.filter("name ==[c] 'étoile'").map(\.name) == ["Étoile", "ÉTOILE"])
        #expect(dogs.filter("name BEGINSWITH[c] 'k'").map(\.name) == ["Kelvin", "\u{212A}elvin"])
        #expect(dogs.filter("name CONTAINS[c] 'TOI'").count == 3)
        #expect(dogs.filter("name LIKE[cd] '?toil?'").count == 3)
    }
}
