import Foundation
import Testing
@testable import OpenRealm
import _OpenRealmEngine

// Every property type, alone, optional and in every collection, written with its extremes,
// closed, reopened and read back; then rewritten with other values through the reopened
// realm and read back once more (so both fresh inserts and in-place updates reach the disk).
//
// Each record class has one property per type; row `r` of a class holds the `r`-th test
// value of each property (cycling through shorter lists), so every extreme is stored, and
// neighbours in a column differ in size and kind.

/// Whether a value read back from a file is the value that was written: exact where Swift's
/// `==` is looser (-0.0 and 0.0, canonically equivalent strings, 1.0 and 1.00 as decimals),
/// NaN for NaN, and dates to within a microsecond (the file keeps nanoseconds; `Date` is a
/// `Double` of seconds since 2001).
protocol StoredEquivalent {
    func matches(_ stored: Self) -> Bool
}

extension StoredEquivalent where Self: Equatable {
    func matches(_ stored: Self) -> Bool { self == stored }
}

extension Bool: StoredEquivalent {}
extension Int: StoredEquivalent {}
extension Int8: StoredEquivalent {}
extension Int16: StoredEquivalent {}
extension Int32: StoredEquivalent {}
extension Int64: StoredEquivalent {}
extension Data: StoredEquivalent {}
extension ObjectId: StoredEquivalent {}
extension UUID: StoredEquivalent {}
extension Tide: StoredEquivalent {}
extension Weather: StoredEquivalent {}

private func sameFloatingPoint<F: FloatingPoint>(_ a: F, _ b: F) -> Bool {
    a.isNaN ? b.isNaN : a == b && a.sign == b.sign
}

extension Float: StoredEquivalent {
    func matches(_ stored: Float) -> Bool { sameFloatingPoint(self, stored) }
}

extension Double: StoredEquivalent {
    func matches(_ stored: Double) -> Bool { sameFloatingPoint(self, stored) }
}

extension String: StoredEquivalent {
    /// Byte for byte: "é" and "e\u{301}" are `==` but are different strings in a file.
    /// (`memcmp`: comparing 16 MiB an element at a time takes a second in a debug build.)
    func matches(_ stored: String) -> Bool {
        var (a, b) = (self, stored)
        return a.withUTF8 { a in b.withUTF8 { b in a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0) } }
    }
}

extension Date: StoredEquivalent {
    func matches(_ stored: Date) -> Bool { abs(timeIntervalSince(stored)) < 1e-6 }
}

extension Decimal128: StoredEquivalent {
    /// The same bits: `==` compares numeric values, so it cannot see -0 turn into 0.
    func matches(_ stored: Decimal128) -> Bool { low == stored.low && high == stored.high }
}

extension AnyRealmValue: StoredEquivalent {
    func matches(_ stored: AnyRealmValue) -> Bool {
        switch (self, stored) {
        case (.none, .none): true
        case let (.int(a), .int(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case let (.float(a), .float(b)): a.matches(b)
        case let (.double(a), .double(b)): a.matches(b)
        case let (.string(a), .string(b)): a.matches(b)
        case let (.data(a), .data(b)): a == b
        case let (.date(a), .date(b)): a.matches(b)
        case let (.objectId(a), .objectId(b)): a == b
        case let (.decimal128(a), .decimal128(b)): a.matches(b)
        case let (.uuid(a), .uuid(b)): a == b
        case let (.object(a), .object(b)): a == b
        default: false
        }
    }
}

extension Optional: StoredEquivalent where Wrapped: StoredEquivalent {
    func matches(_ stored: Wrapped?) -> Bool {
        switch (self, stored) {
        case (nil, nil): true
        case let (a?, b?): a.matches(b)
        default: false
        }
    }
}

/// A short description of a value for a failure message (values here reach 16 MiB).
private func brief(_ value: Any) -> String {
    if let data = value as? Data {
        return "\(data.count) bytes [\(data.prefix(12).map { String($0, radix: 16) }.joined(separator: " "))…]"
    }
    let text = String(describing: value)
    return text.utf8.count <= 120 ? text : "\(text.prefix(100))… (\(text.utf8.count) bytes)"
}

/// The values each type is tested with: its extremes and its awkward cases.
struct Extremes {
    let bools: [Bool] = [false, true]
    let ints: [Int] = [0, .min, .max, -1, 1]
    let int8s: [Int8] = [0, .min, .max, -1]
    let int16s: [Int16] = [0, .min, .max, -1]
    let int32s: [Int32] = [0, .min, .max, -1]
    let int64s: [Int64] = [0, .min, .max, -1, Int64(Int32.max) + 1]
    // -0.0 before 0.0: a set keeps the first of two `==` values.
    let floats: [Float] = [-0.0, 0, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                           .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .pi]
    let doubles: [Double] = [-0.0, 0, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                             .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .pi]
    let strings: [String] = [
        "", "\u{0}", "nul\u{0}inside\u{0}", "héllo wörld", "e\u{301}", "日本語のテキスト", "👩‍👩‍👧‍👦🏳️‍🌈",
        "\u{10FFFF}\u{FEFF}\u{7F}", String(repeating: "x", count: 63), String(repeating: "y", count: 64),
        String(repeating: "ü", count: 200),
    ]
    let datas: [Data] = [Data(), Data([0]), Data(0...255), Data(repeating: 0, count: 64), Data([0xFF, 0, 0xFF])]
    let dates: [Date] = [
        Date(timeIntervalSince1970: 0), .distantPast, .distantFuture,
        Date(timeIntervalSince1970: -0.5), Date(timeIntervalSince1970: 0.5),
        Date(timeIntervalSince1970: 1_700_000_000.123456),
        Date.distantPast.addingTimeInterval(0.5), Date.distantFuture.addingTimeInterval(-0.25),
        Date(timeIntervalSince1970: -2_208_988_800.125),  // 1900, before the epoch with a fraction
        Date(timeIntervalSince1970: 0.999_999_999_6),  // rounds up to the next whole second
        Date(timeIntervalSince1970: -0.000_000_000_4),  // just before the epoch, rounds to it
    ]
    let decimals: [Decimal128] = [
        decimal("-0"), Decimal128(), .maximumDecimalNumber, .minimumDecimalNumber, .nan, .infinity,
        decimal("-Infinity"), decimal("1E-6176"), decimal("-1E-6176"), decimal("0.1"), decimal("1.50"),
        decimal("1234567890123456789012345678901234"), decimal("-1E+6111"),
        Decimal128(low: 0x1234, high: 0x7E00_0000_0000_0000),  // a signalling NaN with a payload
    ]
    let objectIds: [ObjectId] = [ObjectId(), .generate(), try! ObjectId(string: "ffffffffffffffffffffffff"),
                                 try! ObjectId(string: "000000000000000000000001")]
    let uuids: [UUID] = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(),
                         UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!,
                         UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!]
    let tides: [Tide] = [.lowest, .slack, .highest]
    let weathers: [Weather] = [.unnamed, .blizzard, .clear]

    /// Every form of `AnyRealmValue` but links, with the extremes of each.
    var mixeds: [AnyRealmValue] {
        [.none, .int(.min), .int(.max), .bool(false), .bool(true), .float(-0.0), .float(.nan), .float(.greatestFiniteMagnitude),
         .double(.nan), .double(-.infinity), .double(.leastNonzeroMagnitude), .string(""), .string("a\u{0}é👩‍👩‍👧‍👦"),
         .data(Data()), .data(Data([0, 255])), .date(.distantPast), .date(.distantFuture), .date(dates[5]),
         .objectId(objectIds[0]), .objectId(objectIds[1]), .decimal128(.nan), .decimal128(decimals[0]),
         .decimal128(.maximumDecimalNumber), .uuid(uuids[0]), .uuid(uuids[1])]
    }

    private static func decimal(_ text: String) -> Decimal128 { try! Decimal128(string: text) }

    /// Map keys: the empty string, non-ASCII text and plain ones.
    static func key(_ i: Int) -> String {
        switch i {
        case 0: ""
        case 1: "ключ 🔑"
        default: "key \(i)"
        }
    }
}

/// One property of a record class: how to store the values of a row in it, and how to check
/// what a reopened file reads back.
struct Probe<Record: Object> {
    /// How many rows it takes to store each test value once.
    let rows: Int
    let write: (Record, Int) -> Void
    let check: (Record, Int) -> Void

    /// A scalar property: row `r` holds `values[r % values.count]`.
    static func scalar<T: StoredEquivalent>(_ name: String, _ path: ReferenceWritableKeyPath<Record, T>, _ values: [T]) -> Probe {
        Probe(rows: values.count,
              write: { record, row in record[keyPath: path] = values[row % values.count] },
              check: { record, row in
                  let wrote = values[row % values.count], read = record[keyPath: path]
                  #expect(read.matches(wrote), "\(Record.className()).\(name), row \(row): wrote \(brief(wrote)), read \(brief(read))")
              })
    }

    /// An optional property: nil, then each value.
    static func optional<T: StoredEquivalent>(_ name: String, _ path: ReferenceWritableKeyPath<Record, T?>, _ values: [T]) -> Probe {
        scalar(name, path, [nil] + values.map(Optional.some))
    }

    /// The elements of a collection in row `r`: none, all the values, or all of them in
    /// reverse order (and, where the collection keeps duplicates, then all of them again).
    private static func elements<T>(_ values: [T], _ row: Int, duplicates: Bool) -> [T] {
        switch row % 3 {
        case 0: []
        case 1: values
        default: values.reversed() + (duplicates ? values : [])
        }
    }

    static func list<T: StoredEquivalent>(_ name: String, _ path: KeyPath<Record, List<T>>, _ values: [T]) -> Probe {
        Probe(rows: 3,
              write: { record, row in
                  let list = record[keyPath: path]
                  list.removeAll()
                  list.append(objectsIn: elements(values, row, duplicates: true))
              },
              check: { record, row in
                  let wrote = elements(values, row, duplicates: true), read = Array(record[keyPath: path])
                  let context = "\(Record.className()).\(name), row \(row)"
                  #expect(read.count == wrote.count, "\(context): wrote \(wrote.count) elements, read \(read.count)")
                  for (i, (w, r)) in zip(wrote, read).enumerated() {
                      #expect(r.matches(w), "\(context)[\(i)]: wrote \(brief(w)), read \(brief(r))")
                  }
              })
    }

    /// A set property: the values must be distinct under `==`, as a set keeps the first of
    /// two equal values. Sets have no order, so elements are matched in any order.
    static func set<T: StoredEquivalent & Hashable>(_ name: String, _ path: KeyPath<Record, MutableSet<T>>, _ values: [T]) -> Probe {
        var distinct: [T] = []
        for value in values where !distinct.contains(value) { distinct.append(value) }
        return Probe(rows: 3,
                     write: { record, row in
                         let set = record[keyPath: path]
                         set.removeAll()
                         set.insert(objectsIn: elements(distinct, row, duplicates: false))
                     },
                     check: { record, row in
                         let wrote = elements(distinct, row, duplicates: false)
                         var unmatched = Array(record[keyPath: path])
                         let context = "\(Record.className()).\(name), row \(row)"
                         #expect(unmatched.count == wrote.count, "\(context): wrote \(wrote.count) elements, read \(unmatched.count)")
                         for w in wrote {
                             if let i = unmatched.firstIndex(where: { $0.matches(w) }) {
                                 unmatched.remove(at: i)
                             } else {
                                 Issue.record("\(context): wrote \(brief(w)), not read back")
                             }
                         }
                     })
    }

    static func map<T: StoredEquivalent>(_ name: String, _ path: KeyPath<Record, Map<String, T>>, _ values: [T]) -> Probe {
        let entries = { (row: Int) -> [(key: String, value: T)] in
            elements(values, row, duplicates: false).enumerated().map { (key: Extremes.key($0.offset), value: $0.element) }
        }
        return Probe(rows: 3,
                     write: { record, row in
                         let map = record[keyPath: path]
                         map.removeAll()
                         for (key, value) in entries(row) { map[key] = .some(value) }
                     },
                     check: { record, row in
                         let map = record[keyPath: path], wrote = entries(row), read = map.asKeyValueSequence()
                         let context = "\(Record.className()).\(name), row \(row)"
                         #expect(read.count == wrote.count, "\(context): wrote \(wrote.count) entries, read \(read.count)")
                         #expect(Set(read.map(\.key)) == Set(wrote.map(\.key)), "\(context): keys \(read.map(\.key))")
                         for (key, w) in wrote {
                             let r = map[key]
                             #expect(r.map { $0.matches(w) } == true, "\(context)[\(key)]: wrote \(brief(w)), read \(brief(r as Any))")
                         }
                     })
    }
}

@Suite struct RoundTripTests {
    /// Checks the integrity of the test file with the engine's verify.
    static func verify(_ folder: TestFolder, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try verify(folder.configuration(), sourceLocation: sourceLocation)
    }

    /// Checks the integrity of the file of `configuration` with the engine's verify.
    static func verify(_ configuration: Realm.Configuration, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let store = try EngineStore(path: configuration.fileURL!.path)
        #expect(throws: Never.self, sourceLocation: sourceLocation) { try store.verify() }
    }

    /// Writes every row of `Record` through `probes`, reopens and checks them; rewrites each
    /// row with the next row's values through the reopened realm, reopens and checks again.
    /// At least `minimumRows` rows: enough to spread each column over several leaves.
    /// `reopening`: each reopen reads the file written, or a copy of it (CopyReopening).
    static func roundTrip<Record: Object>(_ type: Record.Type, id: ReferenceWritableKeyPath<Record, Int>, minimumRows: Int = 1,
                                          reopening: CopyReopening = .sameFile,
                                          _ probes: [Probe<Record>], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Record.self])
        let rows = max(minimumRows, probes.map(\.rows).max() ?? 1)
        do {
            let realm = try Realm(configuration: configuration)
            configuration = try reopening.write(realm, in: folder) {
                for row in 0..<rows {
                    let record = Record()
                    record[keyPath: id] = row
                    for probe in probes { probe.write(record, row) }
                    realm.add(record)
                }
            }
        }
        for shift in 0...1 {
            let realm = try Realm(configuration: configuration)
            #expect(realm.objects(Record.self).count == rows, sourceLocation: sourceLocation)
            let records = try (0..<rows).map { row in
                try #require(realm.object(ofType: Record.self, forPrimaryKey: row), sourceLocation: sourceLocation)
            }
            for (row, record) in records.enumerated() {
                for probe in probes { probe.check(record, row + shift) }
            }
            if shift == 0 {
                configuration = try reopening.write(realm, in: folder) {
                    for (row, record) in records.enumerated() {
                        for probe in probes { probe.write(record, row + 1) }
                    }
                }
            }
        }
        try verify(configuration, sourceLocation: sourceLocation)
    }

    // MARK: Scalars

    /// Row counts: one leaf of the object tree, and several (a leaf holds at most 256 objects).
    static let rowCounts = [1, 600]

    @Test(arguments: rowCounts, CopyReopening.allCases) func everyScalarTypeKeepsItsExtremes(rows: Int, reopening: CopyReopening) throws {
        let v = Extremes()
        typealias P = Probe<EveryScalar>
        try Self.roundTrip(EveryScalar.self, id: \.id, minimumRows: rows, reopening: reopening, [
            P.scalar("bool", \.bool, v.bools), P.scalar("int", \.int, v.ints), P.scalar("int8", \.int8, v.int8s),
            P.scalar("int16", \.int16, v.int16s), P.scalar("int32", \.int32, v.int32s), P.scalar("int64", \.int64, v.int64s),
            P.scalar("float", \.float, v.floats), P.scalar("double", \.double, v.doubles),
            P.scalar("string", \.string, v.strings), P.scalar("data", \.data, v.datas), P.scalar("date", \.date, v.dates),
            P.scalar("decimal", \.decimal, v.decimals), P.scalar("objectId", \.objectId, v.objectIds),
            P.scalar("uuid", \.uuid, v.uuids), P.scalar("mixed", \.mixed, v.mixeds), P.scalar("tide", \.tide, v.tides),
            P.scalar("weather", \.weather, v.weathers),
        ])
    }

    @Test(arguments: rowCounts, CopyReopening.allCases)
    func everyOptionalScalarTypeKeepsNilAndItsExtremes(rows: Int, reopening: CopyReopening) throws {
        let v = Extremes()
        typealias P = Probe<EveryOptionalScalar>
        try Self.roundTrip(EveryOptionalScalar.self, id: \.id, minimumRows: rows, reopening: reopening, [
            P.optional("bool", \.bool, v.bools), P.optional("int", \.int, v.ints), P.optional("int8", \.int8, v.int8s),
            P.optional("int16", \.int16, v.int16s), P.optional("int32", \.int32, v.int32s), P.optional("int64", \.int64, v.int64s),
            P.optional("float", \.float, v.floats), P.optional("double", \.double, v.doubles),
            P.optional("string", \.string, v.strings), P.optional("data", \.data, v.datas), P.optional("date", \.date, v.dates),
            P.optional("decimal", \.decimal, v.decimals), P.optional("objectId", \.objectId, v.objectIds),
            P.optional("uuid", \.uuid, v.uuids), P.optional("tide", \.tide, v.tides), P.optional("weather", \.weather, v.weathers),
        ])
    }

    @Test func aRecordOfNothingButNilsAndDefaultsRoundTrips() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([EveryScalar.self, EveryOptionalScalar.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                realm.add(EveryScalar())
                realm.add(EveryOptionalScalar())
            }
        }
        let realm = try Realm(configuration: configuration)
        let plain = try #require(realm.objects(EveryScalar.self).first)
        #expect(!plain.bool && plain.int == 0 && plain.int8 == 0 && plain.int16 == 0 && plain.int32 == 0 && plain.int64 == 0)
        #expect(plain.float.matches(0) && plain.double.matches(0) && plain.string.isEmpty && plain.data.isEmpty)
        #expect(plain.date == Date(timeIntervalSince1970: 0) && plain.decimal.matches(Decimal128()) && plain.objectId == ObjectId())
        #expect(plain.uuid == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) && plain.mixed == .none)
        #expect(plain.tide == .slack && plain.weather == .clear)
        let empty = try #require(realm.objects(EveryOptionalScalar.self).first)
        #expect(empty.bool == nil && empty.int == nil && empty.int8 == nil && empty.int16 == nil && empty.int32 == nil)
        #expect(empty.int64 == nil && empty.float == nil && empty.double == nil && empty.string == nil && empty.data == nil)
        #expect(empty.date == nil && empty.decimal == nil && empty.objectId == nil && empty.uuid == nil)
        #expect(empty.tide == nil && empty.weather == nil)
        try Self.verify(folder)
    }

    /// Realm's rule for dates a file cannot hold: those beyond the furthest storable second
    /// (±9.2e18 s from 1970, infinity included) are stored as it, and NaN as 1970. (Storing an
    /// infinite or NaN date used to trap converting it to an integer.)
    @Test func datesOutsideTheStorableRangeAreClampedAndNaNIsStoredAsTheEpoch() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([EveryScalar.self, EveryOptionalScalar.self, EveryList.self])
        let furthest = 9.2e18
        let cases: [(wrote: Double, read: Double)] = [
            (.nan, 0), (.infinity, furthest), (-.infinity, -furthest), (1e300, furthest), (-1e300, -furthest),
            (furthest, furthest), (-furthest, -furthest),
        ]
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for (id, (wrote, _)) in cases.enumerated() {
                    let date = Date(timeIntervalSince1970: wrote)
                    realm.create(EveryScalar.self, value: ["id": id, "date": date, "mixed": AnyRealmValue.date(date)])
                    realm.create(EveryOptionalScalar.self, value: ["id": id, "date": date])
                }
                let list = EveryList()
                list.dates.append(objectsIn: cases.map { Date(timeIntervalSince1970: $0.wrote) })
                realm.add(list)
            }
        }
        let realm = try Realm(configuration: configuration)
        for (id, (wrote, read)) in cases.enumerated() {
            let plain = try #require(realm.object(ofType: EveryScalar.self, forPrimaryKey: id))
            let optional = try #require(realm.object(ofType: EveryOptionalScalar.self, forPrimaryKey: id))
            #expect(plain.date.timeIntervalSince1970 == read, "wrote \(wrote)")
            #expect(plain.mixed.dateValue?.timeIntervalSince1970 == read, "wrote \(wrote)")
            #expect(optional.date?.timeIntervalSince1970 == read, "wrote \(wrote)")
        }
        let list = try #require(realm.objects(EveryList.self).first)
        #expect(list.dates.map(\.timeIntervalSince1970) == cases.map(\.read))
        try Self.verify(folder)
    }

    // MARK: Collections

    @Test(arguments: CopyReopening.allCases) func listsOfEveryTypeKeepTheirElementsInOrder(reopening: CopyReopening) throws {
        let v = Extremes()
        typealias P = Probe<EveryList>
        try Self.roundTrip(EveryList.self, id: \.id, reopening: reopening, [
            P.list("bools", \.bools, v.bools), P.list("ints", \.ints, v.ints), P.list("int8s", \.int8s, v.int8s),
            P.list("int16s", \.int16s, v.int16s), P.list("int32s", \.int32s, v.int32s), P.list("int64s", \.int64s, v.int64s),
            P.list("floats", \.floats, v.floats), P.list("doubles", \.doubles, v.doubles),
            P.list("strings", \.strings, v.strings), P.list("datas", \.datas, v.datas), P.list("dates", \.dates, v.dates),
            P.list("decimals", \.decimals, v.decimals), P.list("objectIds", \.objectIds, v.objectIds),
            P.list("uuids", \.uuids, v.uuids), P.list("mixeds", \.mixeds, v.mixeds), P.list("tides", \.tides, v.tides),
            P.list("weathers", \.weathers, v.weathers),
        ])
    }

    @Test(arguments: CopyReopening.allCases) func listsOfOptionalsKeepTheirNils(reopening: CopyReopening) throws {
        let v = Extremes()
        typealias P = Probe<EveryOptionalList>
        func withNils<T>(_ values: [T]) -> [T?] { [nil] + values.map(Optional.some) + [nil] }
        try Self.roundTrip(EveryOptionalList.self, id: \.id, reopening: reopening, [
            P.list("bools", \.bools, withNils(v.bools)), P.list("ints", \.ints, withNils(v.ints)),
            P.list("int8s", \.int8s, withNils(v.int8s)), P.list("int16s", \.int16s, withNils(v.int16s)),
            P.list("int32s", \.int32s, withNils(v.int32s)), P.list("int64s", \.int64s, withNils(v.int64s)),
            P.list("floats", \.floats, withNils(v.floats)), P.list("doubles", \.doubles, withNils(v.doubles)),
            P.list("strings", \.strings, withNils(v.strings)), P.list("datas", \.datas, withNils(v.datas)),
            P.list("dates", \.dates, withNils(v.dates)), P.list("decimals", \.decimals, withNils(v.decimals)),
            P.list("objectIds", \.objectIds, withNils(v.objectIds)), P.list("uuids", \.uuids, withNils(v.uuids)),
            P.list("tides", \.tides, withNils(v.tides)), P.list("weathers", \.weathers, withNils(v.weathers)),
        ])
    }

    @Test(arguments: CopyReopening.allCases) func setsOfEveryTypeKeepTheirElements(reopening: CopyReopening) throws {
        let v = Extremes()
        typealias P = Probe<EverySet>
        try Self.roundTrip(EverySet.self, id: \.id, reopening: reopening, [
            P.set("bools", \.bools, v.bools), P.set("ints", \.ints, v.ints), P.set("int8s", \.int8s, v.int8s),
            P.set("int16s", \.int16s, v.int16s), P.set("int32s", \.int32s, v.int32s), P.set("int64s", \.int64s, v.int64s),
            P.set("floats", \.floats, v.floats), P.set("doubles", \.doubles, v.doubles),
            P.set("strings", \.strings, v.strings), P.set("datas", \.datas, v.datas), P.set("dates", \.dates, v.dates),
            P.set("decimals", \.decimals, v.decimals), P.set("objectIds", \.objectIds, v.objectIds),
            P.set("uuids", \.uuids, v.uuids), P.set("mixeds", \.mixeds, v.mixeds), P.set("tides", \.tides, v.tides),
            P.set("weathers", \.weathers, v.weathers),
        ])
    }

    @Test(arguments: CopyReopening.allCases) func setsOfOptionalsKeepTheirNil(reopening: CopyReopening) throws {
        let v = Extremes()
        typealias P = Probe<EveryOptionalSet>
        func withNil<T>(_ values: [T]) -> [T?] { values.map(Optional.some) + [nil] }
        try Self.roundTrip(EveryOptionalSet.self, id: \.id, reopening: reopening, [
            P.set("bools", \.bools, withNil(v.bools)), P.set("ints", \.ints, withNil(v.ints)),
            P.set("int8s", \.int8s, withNil(v.int8s)), P.set("int16s", \.int16s, withNil(v.int16s)),
            P.set("int32s", \.int32s, withNil(v.int32s)), P.set("int64s", \.int64s, withNil(v.int64s)),
            P.set("floats", \.floats, withNil(v.floats)), P.set("doubles", \.doubles, withNil(v.doubles)),
            P.set("strings", \.strings, withNil(v.strings)), P.set("datas", \.datas, withNil(v.datas)),
            P.set("dates", \.dates, withNil(v.dates)), P.set("decimals", \.decimals, withNil(v.decimals)),
            P.set("objectIds", \.objectIds, withNil(v.objectIds)), P.set("uuids", \.uuids, withNil(v.uuids)),
            P.set("tides", \.tides, withNil(v.tides)), P.set("weathers", \.weathers, withNil(v.weathers)),
        ])
    }

    @Test(arguments: CopyReopening.allCases) func mapsOfEveryTypeKeepTheirEntries(reopening: CopyReopening) throws {
        let v = Extremes()
        typealias P = Probe<EveryMap>
        try Self.roundTrip(EveryMap.self, id: \.id, reopening: reopening, [
            P.map("bools", \.bools, v.bools), P.map("ints", \.ints, v.ints), P.map("int8s", \.int8s, v.int8s),
            P.map("int16s", \.int16s, v.int16s), P.map("int32s", \.int32s, v.int32s), P.map("int64s", \.int64s, v.int64s),
            P.map("floats", \.floats, v.floats), P.map("doubles", \.doubles, v.doubles),
            P.map("strings", \.strings, v.strings), P.map("datas", \.datas, v.datas), P.map("dates", \.dates, v.dates),
            P.map("decimals", \.decimals, v.decimals), P.map("objectIds", \.objectIds, v.objectIds),
            P.map("uuids", \.uuids, v.uuids), P.map("mixeds", \.mixeds, v.mixeds), P.map("tides", \.tides, v.tides),
            P.map("weathers", \.weathers, v.weathers),
        ])
    }

    @Test(arguments: CopyReopening.allCases) func mapsOfOptionalsKeepTheirNilEntries(reopening: CopyReopening) throws {
        let v = Extremes()
        typealias P = Probe<EveryOptionalMap>
        func withNils<T>(_ values: [T]) -> [T?] { [nil] + values.map(Optional.some) + [nil] }
        try Self.roundTrip(EveryOptionalMap.self, id: \.id, reopening: reopening, [
            P.map("bools", \.bools, withNils(v.bools)), P.map("ints", \.ints, withNils(v.ints)),
            P.map("int8s", \.int8s, withNils(v.int8s)), P.map("int16s", \.int16s, withNils(v.int16s)),
            P.map("int32s", \.int32s, withNils(v.int32s)), P.map("int64s", \.int64s, withNils(v.int64s)),
            P.map("floats", \.floats, withNils(v.floats)), P.map("doubles", \.doubles, withNils(v.doubles)),
            P.map("strings", \.strings, withNils(v.strings)), P.map("datas", \.datas, withNils(v.datas)),
            P.map("dates", \.dates, withNils(v.dates)), P.map("decimals", \.decimals, withNils(v.decimals)),
            P.map("objectIds", \.objectIds, withNils(v.objectIds)), P.map("uuids", \.uuids, withNils(v.uuids)),
            P.map("tides", \.tides, withNils(v.tides)), P.map("weathers", \.weathers, withNils(v.weathers)),
        ])
    }

    // MARK: Links

    @Test(arguments: CopyReopening.allCases) func linksEmbeddedObjectsAndLinkingObjectsSurviveReopening(reopening: CopyReopening) throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Waypoint.self, Landmark.self, Coordinate.self])
        do {
            let realm = try Realm(configuration: configuration)
            let (a, b, c, d, e) = (Waypoint("a"), Waypoint("b"), Waypoint("c"), Waypoint("d"), Waypoint("e"))
            let tower = Landmark()
            tower.name = "tower"
            a.next = b; b.next = c; c.next = a  // a cycle
            d.next = d  // a loop
            a.route.append(objectsIn: [b, c, d])
            b.route.append(objectsIn: [c, d])
            a.stops.insert(objectsIn: [b, e])
            a.byName["b"] = .some(b)
            a.byName["self"] = .some(a)
            a.byName["nobody"] = .some(nil)
            a.landmark = tower; b.landmark = tower
            a.anything = .object(tower)
            b.anything = .object(c)
            a.anythings.append(objectsIn: [.object(d), .none, .object(tower), .string("x")])
            let here = Coordinate()
            here.x = -0.0
            here.tags.append(objectsIn: [nil, .min, .max])
            a.position = here
            for (x, label) in [(1.5, "one" as String?), (.nan, nil), (-.infinity, "")] {
                let point = Coordinate()
                point.x = x
                point.label = label
                a.track.append(point)
            }
            configuration = try reopening.write(realm, in: folder) {
                realm.add(a)
                realm.add(e)
            }
        }
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Waypoint.self).count == 5 && realm.objects(Landmark.self).count == 1)
        func waypoint(_ name: String) throws -> Waypoint { try #require(realm.object(ofType: Waypoint.self, forPrimaryKey: name)) }
        func names<S: Sequence>(_ objects: S) -> [String] where S.Element == Waypoint { objects.map(\.name).sorted() }
        let (a, b, c, d, e) = (try waypoint("a"), try waypoint("b"), try waypoint("c"), try waypoint("d"), try waypoint("e"))

        #expect(a.next?.name == "b" && b.next?.name == "c" && c.next?.name == "a" && d.next?.name == "d" && e.next == nil)
        #expect(a.next?.next?.next == a)
        #expect(a.route.map(\.name) == ["b", "c", "d"] && b.route.map(\.name) == ["c", "d"] && c.route.isEmpty)
        #expect(names(a.stops) == ["b", "e"] && e.stops.isEmpty)
        #expect(a.byName.count == 3 && a.byName["b"]??.name == "b" && a.byName["self"]??.name == "a")
        #expect(a.byName["nobody"] != nil && a.byName["nobody"]! == nil)
        #expect(a.landmark?.name == "tower" && c.landmark == nil)
        #expect(a.anything.object(Landmark.self)?.name == "tower")
        #expect(b.anything.object(Waypoint.self)?.name == "c" && c.anything == .none)
        #expect(a.anythings.count == 4 && a.anythings[0].object(Waypoint.self)?.name == "d" && a.anythings[1] == .none)
        #expect(a.anythings[2].object(Landmark.self)?.name == "tower" && a.anythings[3] == .string("x"))

        // Inverse links are computed from the reopened file.
        #expect(names(a.previous) == ["c"] && names(b.previous) == ["a"] && names(d.previous) == ["d"] && e.previous.isEmpty)
        #expect(names(c.onRoutesOf) == ["a", "b"] && names(d.onRoutesOf) == ["a", "b"] && a.onRoutesOf.isEmpty)
        #expect(names(b.stopOf) == ["a"] && names(e.stopOf) == ["a"] && c.stopOf.isEmpty)
        let tower = try #require(realm.object(ofType: Landmark.self, forPrimaryKey: "tower"))
        #expect(names(tower.nearby) == ["a", "b"])

        // Embedded objects.
        let here = try #require(a.position)
        #expect(here.x == 0 && here.x.sign == .minus && here.label == nil)
        #expect(Array(here.tags) == [nil, .min, .max])
        #expect(b.position == nil && b.track.isEmpty)
        #expect(a.track.count == 3)
        #expect(a.track[0].x == 1.5 && a.track[0].label == "one" && a.track[0].tags.isEmpty)
        #expect(a.track[1].x.isNaN && a.track[1].label == nil)
        #expect(a.track[2].x == -.infinity && a.track[2].label == "")
        try Self.verify(configuration)
    }

    // MARK: The 16 MiB limit

    @Test func valuesOfExactlySixteenMebibytesRoundTrip() throws {
        let limit = 16 * 1024 * 1024
        // Characters of every UTF-8 width, and a NUL: 1 + 2 + 3 + 4 + 1 = 11 bytes, then ASCII
        // to reach the limit exactly.
        let unit = "aé€😀\u{0}"
        var text = String(repeating: unit, count: limit / unit.utf8.count)
        text += String(repeating: "z", count: limit - text.utf8.count)
        #expect(text.utf8.count == limit)
        // Blocks of a prime length, each numbered, so that a shifted or repeated block shows.
        var blocks = Data(capacity: limit + 4097)
        let block = Data((0..<4093).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        var number: UInt32 = 0
        while blocks.count < limit {
            withUnsafeBytes(of: number) { blocks.append(contentsOf: $0) }
            blocks.append(block)
            number += 1
        }
        let bytes = Data(blocks.prefix(limit))
        let folder = TestFolder()
        let configuration = folder.configuration([Payload.self])
        do {
            let realm = try Realm(configuration: configuration)
            let big = Payload()
            big.id = 1
            big.text = text
            big.bytes = bytes
            big.mixed = .string(text)
            big.chunks.append(objectsIn: [nil, bytes, Data()])
            // A small neighbour in the same columns.
            let small = Payload()
            small.id = 2
            small.text = "small"
            small.mixed = .data(Data([1]))
            try realm.write { realm.add([big, small]) }
        }
        let realm = try Realm(configuration: configuration)
        let big = try #require(realm.object(ofType: Payload.self, forPrimaryKey: 1))
        let small = try #require(realm.object(ofType: Payload.self, forPrimaryKey: 2))
        #expect(big.text.utf8.count == limit && big.text.matches(text))
        #expect(big.bytes?.count == limit && big.bytes == bytes)
        #expect(big.mixed.matches(.string(text)))
        #expect(Array(big.chunks) == [nil, bytes, Data()])
        #expect(small.text == "small" && small.bytes == nil && small.mixed == .data(Data([1])) && small.chunks.isEmpty)
        try Self.verify(folder)
    }
}
