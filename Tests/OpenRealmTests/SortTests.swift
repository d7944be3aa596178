import Foundation
import Testing
import TestSupport
@testable import OpenRealm

/// Sorting by one property (sorted only as far as it is read, from sort keys) orders exactly
/// as the per-object sort does: nil first ascending, NaN before numbers, equal values in key
/// order, long strings and dates past their first eight bytes or seconds.
@Suite struct SortTests {
    static func fill(_ realm: Realm, count: Int, seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let strings: [String?] = [nil, "", "a", "abcdefgh", "abcdefghX", "abcdefghY", "abcdefgh\u{0}", "é", "Zed", "abcdefghijklmnopq1", "abcdefghijklmnopq0"]
        let doubles: [Double?] = [nil, .nan, -0.0, 0.0, 1.5, -1e300, .infinity, 2]
        try realm.write {
            for id in 0..<count {
                let seconds = Double(Int.random(in: -3...3, using: &random))
                realm.create(EveryOptionalScalar.self, value: [
                    "id": id,
                    "string": strings[Int.random(in: 0..<strings.count, using: &random)] as Any,
                    "double": doubles[Int.random(in: 0..<doubles.count, using: &random)] as Any,
                    "int": Bool.random(using: &random) ? Int.random(in: -3...3, using: &random) as Any : Optional<Int>.none as Any,
                    "float": Float(Int.random(in: -2...2, using: &random)) / 2,
                    "bool": Bool.random(using: &random),
                    "date": Date(timeIntervalSince1970: seconds + Double(Int.random(in: 0...3, using: &random)) / 4),
                ])
            }
        }
    }

    static let properties = ["string", "double", "int", "float", "bool", "date"]

    /// The lazy sort read in pieces, and whole, against the per-object sort (two descriptors,
    /// the second the key order, which a one-property sort keeps among equals).
    static func check(_ results: Results<EveryOptionalScalar>, _ context: String) {
        for property in properties {
            for ascending in [true, false] {
                let expected = results.sorted(by: [SortDescriptor(keyPath: property, ascending: ascending), "id"]).map(\.id)
                let lazy = results.sorted(byKeyPath: property, ascending: ascending)
                let firstFew = (0..<min(5, expected.count)).map { lazy[$0].id }
                #expect(firstFew == Array(expected.prefix(5)), "\(property) \(ascending) first few \(context)")
                if expected.count > 300 { #expect(lazy[300].id == expected[300], "\(property) \(ascending) at 300 \(context)") }
                #expect(lazy.map(\.id) == expected, "\(property) \(ascending) \(context)")
                #expect(Array(results.sorted(byKeyPath: property, ascending: ascending)).map(\.id) == expected, "\(property) \(ascending) enumerated \(context)")
                // All at once, as an observation's `.initial` reads them (the radix sort).
                let descriptors = [SortDescriptor(keyPath: property, ascending: ascending), "id"]
                #expect(results.sorted(byKeyPath: property, ascending: ascending).keys == results.sorted(by: descriptors).keys,
                        "\(property) \(ascending) all at once \(context)")
            }
        }
    }

    @Test func sortingByOnePropertyMatchesThePerObjectSort() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([EveryOptionalScalar.self]))
        try Self.fill(realm, count: 700, seed: 21)
        let all = realm.objects(EveryOptionalScalar.self)
        Self.check(all, "all")
        Self.check(all.filter("int != 0"), "filtered")
        try realm.write {
            // Inside a write: changed leaves hold values, not blocks.
            for object in all.filter("id < 100") { object.string = "abcdefghZ" }
            Self.check(all, "in a write")
        }
    }

    /// Values spread over every byte of their sort keys (negative and positive integers and
    /// doubles of any size, dates a century apart), so that the radix sort's every digit
    /// counts, with runs of equal values kept in key order.
    @Test func sortingWideValuesAllAtOnceMatchesThePerObjectSort() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([EveryOptionalScalar.self]))
        var random = SeededRandom(seed: 5)
        try realm.write {
            for id in 0..<5_000 {
                let repeated = id % 7 == 0
                realm.create(EveryOptionalScalar.self, value: [
                    "id": id,
                    "int": repeated ? 42 : Int.random(in: Int.min...Int.max, using: &random),
                    "double": repeated ? -1.0 : Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random) & ~(0x7FF << 52))
                        * (Bool.random(using: &random) ? 1e300 : -1e-300),
                    "date": Date(timeIntervalSince1970: repeated ? 0 : Double(Int.random(in: -3_000_000_000...3_000_000_000, using: &random))),
                    "string": repeated ? "same prefix \(id % 3)" : String(UInt64.random(in: 0...UInt64.max, using: &random), radix: 36),
                ])
            }
        }
        let all = realm.objects(EveryOptionalScalar.self)
        for property in ["int", "double", "date", "string"] {
            for ascending in [true, false] {
                let descriptors = [SortDescriptor(keyPath: property, ascending: ascending), "id"]
                #expect(all.sorted(byKeyPath: property, ascending: ascending).keys == all.sorted(by: descriptors).keys, "\(property) \(ascending)")
            }
        }
    }
}
