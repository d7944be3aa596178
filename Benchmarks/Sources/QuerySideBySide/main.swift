// Queries on the object layer against GRDB's query interface, as a server developer writes
// each, over the same 1,000,000 `Person` rows (Benchmarks/Sources/EngineWorkloads):
//
//   W4   count of age > 30 AND name starting with "A" (case-insensitive on both sides:
//        SQLite's LIKE is; names are lower case)
//   W4b  count of age == 42 (age is indexed on both sides)
//   W5   sum of score over every row
//   W5s  the first 100 by name, each name read
//
// Each query is built anew per run (OpenRealm results keep their keys until the data
// changes; a server answers new requests). Prints queries per second and the ratio: with
// `--repeat N`, N timed seconds per engine taken in turn, and the medians (with the range of
// the ratios), since one second of a query of a few milliseconds moves by a fifth here.
//
//   swift run -c release --package-path Benchmarks QuerySideBySide [--rows N] [--openrealm-only] [--only W4] [--repeat N] [--encrypted]
//                                                                  [--encrypted-cache-size BYTES]
//
// `--encrypted` loads the same objects into a second, encrypted realm (`encryptionKey`, 64 bytes)
// and runs every query on it too, in turn with the plain one (the two swap places every
// repeat), and prints the ratios encrypted / plain and encrypted / GRDB (issue 29), the two
// files' sizes and the time to open a copy of each (a new store: the encrypted one decrypts
// the file then). `--encrypted-cache-size` sets `Realm.Configuration.encryptedCacheSize`
// (default 256 MiB): below the file's size, scans decrypt pages again.
//
// `--verify-open N`: before the workloads, opens copies of the OpenRealm file N times each with
// and without `verifyIntegrityOnOpen` (a new store each time, which has verified nothing) and
// prints the medians and the cost per GiB of file.

import EngineWorkloads
import Foundation
import GRDB
import OpenRealm

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var score = 0.0
    @Persisted var email: String?
}

var rows = 1_000_000
var openRealmOnly = false
var only: String?
var repeats = 1
var verifyOpens = 0
var encrypted = false
var encryptedCacheSize: Int?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--rows": rows = Int(arguments.next()!)!
    case "--openrealm-only": openRealmOnly = true
    case "--only": only = arguments.next()!
    case "--repeat": repeats = Int(arguments.next()!)!
    case "--verify-open": verifyOpens = Int(arguments.next()!)!
    case "--encrypted": encrypted = true
    case "--encrypted-cache-size": encryptedCacheSize = Int(arguments.next()!)!
    default: preconditionFailure("unknown option \(argument); see the comment at the top of main.swift")
    }
}

let data = BenchmarkData.rows(count: rows)
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("query-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

// MARK: Loading (not timed)

/// The encrypted realm's key: any 64 bytes (the benchmark measures the cipher, not the key).
let encryptionKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })

/// The budget of decrypted pages (`--encrypted-cache-size`), fixed before anything runs.
let encryptedCacheBudget = encryptedCacheSize

func realmConfiguration(_ file: URL, encrypted: Bool) -> Realm.Configuration {
    var configuration = Realm.Configuration(fileURL: file, objectTypes: [Person.self], encryptionKey: encrypted ? encryptionKey : nil)
    if encrypted, let encryptedCacheBudget { configuration.encryptedCacheSize = encryptedCacheBudget }
    return configuration
}

let realmFile = folder.appendingPathComponent("bench.realm")
let encryptedFile = folder.appendingPathComponent("bench-encrypted.realm")
let realm = try Realm(configuration: realmConfiguration(realmFile, encrypted: false))
for start in stride(from: 0, to: rows, by: 10_000) {
    try realm.write {
        for row in data[start..<min(start + 10_000, rows)] {
            let person = Person()
            person.id = Int(row.id)
            person.name = row.name
            person.age = Int(row.age)
            person.score = row.score
            person.email = row.note
            realm.add(person)
        }
    }
}

// The encrypted realm gets the same objects in the same order and the same writes of 10,000.
let encryptedRealm = encrypted ? try Realm(configuration: realmConfiguration(encryptedFile, encrypted: true)) : nil
if let encryptedRealm {
    let people = realm.objects(Person.self).sorted(byKeyPath: "id")
    for start in stride(from: 0, to: rows, by: 10_000) {
        try encryptedRealm.write {
            for index in start..<min(start + 10_000, rows) { encryptedRealm.create(Person.self, value: people[index]) }
        }
    }
}

var configuration = Configuration()
configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
let pool = try DatabasePool(path: folder.appendingPathComponent("bench.sqlite").path, configuration: configuration)
if !openRealmOnly {
    try pool.write { db in try PersonRecord.createTable(db) }
    for start in stride(from: 0, to: rows, by: 10_000) {
        try pool.write { db in
            for row in data[start..<min(start + 10_000, rows)] { try PersonRecord(row).insert(db) }
        }
    }
}

// MARK: Verifying at open

if verifyOpens > 0 {
    let source = folder.appendingPathComponent("bench.realm")
    let bytes = Double((try FileManager.default.attributesOfItem(atPath: source.path)[.size] as? Int) ?? 0)
    func openSeconds(verify: Bool, _ n: Int) throws -> Double {
        let copy = folder.appendingPathComponent("copy-\(verify)-\(n).realm")
        try FileManager.default.copyItem(at: source, to: copy)
        var configuration = Realm.Configuration(fileURL: copy, objectTypes: [Person.self])
        configuration.verifyIntegrityOnOpen = verify
        let start = DispatchTime.now().uptimeNanoseconds
        _ = try Realm(configuration: configuration)
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
    var plain: [Double] = [], verified: [Double] = []
    for n in 0..<verifyOpens {
        plain.append(try openSeconds(verify: false, n))
        verified.append(try openSeconds(verify: true, n))
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let extra = median(verified) - median(plain)
    print(String(format: "open of a %.1f MiB file: %.1f ms, with verifyIntegrityOnOpen %.1f ms (medians of %d): %.2f s per GiB verified\n",
                 bytes / 1_048_576, median(plain) * 1000, median(verified) * 1000, verifyOpens, extra / (bytes / 1_073_741_824)))
}

// MARK: Workloads

struct Workload {
    var name: String
    var description: String
    var openRealm: (Realm) throws -> Int
    var grdb: () throws -> Int
}

let age = Column("age"), name = Column("name"), score = Column("score")
let workloads = [
    Workload(name: "W4", description: "count age > 30 AND name BEGINSWITH[c] 'A'",
             openRealm: { realm in realm.objects(Person.self).filter("age > 30 AND name BEGINSWITH[c] 'A'").count },
             grdb: { try pool.read { db in try PersonRecord.filter(age > 30 && name.like("A%")).fetchCount(db) } }),
    Workload(name: "W4t", description: "W4 as a type-safe query",
             openRealm: { realm in realm.objects(Person.self).where { $0.age > 30 && $0.name.starts(with: "A", options: .caseInsensitive) }.count },
             grdb: { try pool.read { db in try PersonRecord.filter(age > 30 && name.like("A%")).fetchCount(db) } }),
    Workload(name: "W4b", description: "count age == 42 (indexed)",
             openRealm: { realm in realm.objects(Person.self).filter("age == 42").count },
             grdb: { try pool.read { db in try PersonRecord.filter(age == 42).fetchCount(db) } }),
    Workload(name: "W5", description: "sum of score",
             openRealm: { realm in Int(realm.objects(Person.self).sum(ofProperty: "score") as Double) },
             grdb: { try pool.read { db in Int(try Double.fetchOne(db, PersonRecord.select(sum(score)))!) } }),
    Workload(name: "W5s", description: "first 100 by name, names read",
             openRealm: { realm in realm.objects(Person.self).sorted(byKeyPath: "name").prefix(100).reduce(0) { $0 + $1.name.utf8.count } },
             grdb: { try pool.read { db in try PersonRecord.order(name).limit(100).fetchAll(db).reduce(0) { $0 + $1.name.utf8.count } } }),
]

print("\(rows) objects; queries per second, " + (repeats == 1 ? "one timed second each\n" : "median of \(repeats) timed seconds each, the engines in turn\n"))
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func range(_ ratios: [Double]) -> String {
    ratios.isEmpty ? "-" : String(format: "%.2f (%.2f–%.2f)×", median(ratios), ratios.min()!, ratios.max()!)
}
if encryptedRealm != nil {
    print("| workload | OpenRealm (/s) | OpenRealm encrypted (/s) | GRDB (/s) | encrypted / plain | encrypted / plain, each repeat: median (range) | encrypted / GRDB | plain / GRDB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
} else {
    print("| workload | OpenRealm (/s) | GRDB (/s) | ratio | ratios seen |")
    print("|---|---:|---:|---:|---:|")
}
for w in workloads where only == nil || only == w.name {
    var ours: [Double] = [], sealed: [Double] = [], theirs: [Double] = []
    for round in 0..<repeats {
        var answer = 0
        // Plain and encrypted swap places every repeat, so neither always runs first.
        if let encryptedRealm, round % 2 == 1 { sealed.append(try runsPerSecond { answer = try w.openRealm(encryptedRealm) }) }
        var plain = 0
        ours.append(try runsPerSecond { plain = try w.openRealm(realm) })
        if let encryptedRealm, round % 2 == 0 { sealed.append(try runsPerSecond { answer = try w.openRealm(encryptedRealm) }) }
        if encryptedRealm != nil { precondition(answer == plain, "\(w.name): encrypted OpenRealm answered \(answer), plain \(plain)") }
        if !openRealmOnly {
            var peer = 0
            theirs.append(try runsPerSecond { peer = try w.grdb() })
            precondition(plain == peer, "\(w.name): OpenRealm answered \(plain), GRDB \(peer)")
        }
    }
    func rate(_ values: [Double]) -> String { values.isEmpty ? "-" : String(format: "%.1f", median(values)) }
    func ratio(_ a: [Double], _ b: [Double]) -> String {
        a.isEmpty || b.isEmpty ? "-" : String(format: median(a) / median(b) < 10 ? "%.2f×" : "%.1f×", median(a) / median(b))
    }
    if encryptedRealm != nil {
        print("| \(w.name) \(w.description) | \(rate(ours)) | \(rate(sealed)) | \(rate(theirs)) | \(ratio(sealed, ours)) | "
              + "\(range(zip(sealed, ours).map { $0 / $1 })) | \(ratio(sealed, theirs)) | \(ratio(ours, theirs)) |")
    } else {
        let ratios = zip(ours, theirs).map { $0 / $1 }
        let seen = ratios.isEmpty ? "-" : String(format: "%.1f–%.1f×", ratios.min()!, ratios.max()!)
        print("| \(w.name) \(w.description) | \(String(format: "%.1f", median(ours))) | \(theirs.isEmpty ? "-" : String(format: "%.1f", median(theirs))) | "
              + "\(theirs.isEmpty ? "-" : String(format: "%.1f×", median(ours) / median(theirs))) | \(seen) |")
    }
}

// MARK: The encrypted file

if encrypted {
    /// The size of `file` and of the files beside it whose names start with its name (SQLite's WAL).
    func mib(_ file: URL) -> String {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let bytes = names.filter { $0.hasPrefix(file.lastPathComponent) && !$0.hasSuffix(".lock") }.reduce(0) {
            $0 + ((try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent($1).path)[.size] as? Int) ?? 0)
        }
        return String(format: "%.1f", Double(bytes) / 1_048_576)
    }
    /// Milliseconds to open a copy of `source` (a new store, which reads or decrypts the file), the median of 3.
    func openMilliseconds(_ source: URL, encrypted: Bool) throws -> Double {
        var times: [Double] = []
        for n in 0..<3 {
            let copy = folder.appendingPathComponent("open-\(encrypted)-\(n).realm")
            try FileManager.default.copyItem(at: source, to: copy)
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try Realm(configuration: realmConfiguration(copy, encrypted: encrypted))
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        return median(times)
    }
    let plainOpen = try openMilliseconds(realmFile, encrypted: false)
    let encryptedOpen = try openMilliseconds(encryptedFile, encrypted: true)
    print("\nfile after loading: plain \(mib(realmFile)) MiB, encrypted \(mib(encryptedFile)) MiB"
          + (openRealmOnly ? "" : ", SQLite \(mib(folder.appendingPathComponent("bench.sqlite"))) MiB (with its WAL)"))
    print(String(format: "open of a copy (a new store), median of 3: plain %.1f ms, encrypted %.1f ms", plainOpen, encryptedOpen))
}
