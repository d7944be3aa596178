// The object layer against GRDB with Codable records, as a server developer writes each:
// W1 bulk insert (10,000 objects per write) and W3 random primary-key lookups reading every
// field. Prints both figures and the ratio (OpenRealm / GRDB; above 1: OpenRealm is faster).
//
//   swift run -c release --package-path Benchmarks ObjectSideBySide [--rows N] [--repeat N] [--keep] [--openrealm-only] [--insert-only]
//                                                                   [--encrypted | --encrypted-only] [--encrypted-cache-size BYTES]
//
// With --repeat N each engine runs N times, in turn, and the best of each figure is kept.
//
// --openrealm-only skips GRDB and --insert-only skips W3 (for profiling: `valgrind --tool=callgrind`).
// --encrypted adds a third engine, OpenRealm on an encrypted file (`encryptionKey`, 64 bytes),
// and the ratios encrypted / plain and encrypted / GRDB (issue 29), with the range of the
// encrypted / plain ratios over the repeats (plain and encrypted alternate which goes first).
// --encrypted-only runs the encrypted engine alone (for `perf record`).
// --encrypted-cache-size sets `Realm.Configuration.encryptedCacheSize` (default 256 MiB), the
// decrypted pages the encrypted file keeps: below the file's size, W3 decrypts pages again.
// With --encrypted the table also has the process's CPU time (user + system, every thread) for
// W1 and W3, the least of the repeats: on a loaded machine it moves less than the wall clock.
// --keep leaves the files in the temporary directory (their paths are printed), for
// `openrealm inspect` and `sqlite3_analyzer`.

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
var repeats = 1
var keepFiles = false
var openRealmOnly = false
var insertOnly = false
var encrypted = false
var plainOpenRealm = true
var encryptedCacheSize: Int?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--rows": rows = Int(arguments.next()!)!
    case "--repeat": repeats = max(1, Int(arguments.next()!)!)
    case "--keep": keepFiles = true
    case "--openrealm-only": openRealmOnly = true
    case "--insert-only": insertOnly = true
    case "--encrypted": encrypted = true
    case "--encrypted-only": encrypted = true; plainOpenRealm = false; openRealmOnly = true
    case "--encrypted-cache-size": encryptedCacheSize = Int(arguments.next()!)!
    default: preconditionFailure("unknown option \(argument); see the comment at the top of main.swift")
    }
}

let data = BenchmarkData.rows(count: rows)
var random = SeededGenerator(seed: 7)
let lookups = (0..<rows).map { _ in Int64.random(in: 0..<Int64(rows), using: &random) }

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

/// Wall and CPU seconds of `body`.
func timed(_ body: () throws -> Void) rethrows -> (wall: Double, cpu: Double) {
    let cpu = processCPUSeconds()
    let wall = try seconds(body)
    return (wall, processCPUSeconds() - cpu)
}

func folder() -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("object-bench-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

func fileSize(_ url: URL) -> Int {
    let files = (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: [.fileSizeKey])) ?? []
    return files.reduce(0) { $0 + ((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
}

struct Result {
    var insert = 0.0, lookup = 0.0, lookupCached = 0.0, bytes = 0
    /// CPU seconds of W1 and W3 (OpenRealm only).
    var insertCPU = Double.infinity, lookupCPU = Double.infinity
}

/// The encrypted engine's key: any 64 bytes (the benchmark measures the cipher, not the key).
let encryptionKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })

@MainActor func runOpenRealm(encrypted: Bool = false) throws -> Result {
    let dir = folder()
    defer { if keepFiles { print("kept \(dir.path)") } else { try? FileManager.default.removeItem(at: dir) } }
    var result = Result()
    try autoreleasepool {
        var configuration = Realm.Configuration(fileURL: dir.appendingPathComponent("bench.realm"), objectTypes: [Person.self],
                                                encryptionKey: encrypted ? encryptionKey : nil)
        if let encryptedCacheSize { configuration.encryptedCacheSize = encryptedCacheSize }
        let realm = try Realm(configuration: configuration)
        let insert = try timed {
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
        }
        var checksum = 1
        let lookup = timed {
            for id in lookups where !insertOnly {
                let person = realm.object(ofType: Person.self, forPrimaryKey: Int(id))!
                checksum &+= person.id &+ person.name.utf8.count &+ person.age &+ Int(person.score) &+ (person.email?.utf8.count ?? 0)
            }
        }
        precondition(checksum != 0)
        result = Result(insert: Double(rows) / insert.wall, lookup: Double(rows) / lookup.wall, lookupCached: Double(rows) / lookup.wall,
                        bytes: fileSize(dir), insertCPU: insert.cpu, lookupCPU: lookup.cpu)
    }
    return result
}

@MainActor func runGRDB() throws -> Result {
    let dir = folder()
    defer { if keepFiles { print("kept \(dir.path)") } else { try? FileManager.default.removeItem(at: dir) } }
    var configuration = Configuration()
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    let pool = try DatabasePool(path: dir.appendingPathComponent("bench.sqlite").path, configuration: configuration)
    try pool.write { db in try PersonRecord.createTable(db) }
    let insert = try seconds {
        for start in stride(from: 0, to: rows, by: 10_000) {
            try pool.write { db in
                for row in data[start..<min(start + 10_000, rows)] {
                    try PersonRecord(id: row.id, name: row.name, age: row.age, score: row.score, email: row.note).insert(db)
                }
            }
        }
    }
    var checksum = 0
    let lookup = try seconds {
        try pool.read { db in
            for id in lookups {
                let person = try PersonRecord.fetchOne(db, key: id)!
                checksum &+= Int(person.id) &+ person.name.utf8.count &+ Int(person.age) &+ Int(person.score) &+ (person.email?.utf8.count ?? 0)
            }
        }
    }
    let cached = try seconds {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT id, name, age, score, email FROM person WHERE id = ?")
            for id in lookups {
                let row = try Row.fetchOne(statement, arguments: [id])!
                let name: String = row[1]
                let email: String? = row[4]
                checksum &+= Int(row[0] as Int64) &+ name.utf8.count &+ Int(row[2] as Int64) &+ Int(row[3] as Double) &+ (email?.utf8.count ?? 0)
            }
        }
    }
    precondition(checksum != 0)
    return Result(insert: Double(rows) / insert, lookup: Double(rows) / lookup, lookupCached: Double(rows) / cached, bytes: fileSize(dir))
}

extension Result {
    /// The best of each figure of `self` and `r` (files are the same size every run).
    func best(_ r: Result) -> Result {
        Result(insert: max(insert, r.insert), lookup: max(lookup, r.lookup), lookupCached: max(lookupCached, r.lookupCached), bytes: r.bytes,
               insertCPU: min(insertCPU, r.insertCPU), lookupCPU: min(lookupCPU, r.lookupCPU))
    }
}

#if !canImport(ObjectiveC)
func autoreleasepool<T>(_ body: () throws -> T) rethrows -> T { try body() }
#endif

// The engines take turns, one run each per repeat: this VM's speed drifts by 10–20% over a
// minute, and all of one engine's runs before all of the other's put that drift into the ratio.
// Plain and encrypted OpenRealm swap places every repeat, so neither always runs first.
var realm = Result(), sealed = Result(), grdb = Result()
var insertRatios: [Double] = [], lookupRatios: [Double] = [], insertCPURatios: [Double] = [], lookupCPURatios: [Double] = []
for round in 0..<repeats {
    var plainRun: Result?, encryptedRun: Result?
    if encrypted, round % 2 == 1 { encryptedRun = try runOpenRealm(encrypted: true) }
    if plainOpenRealm { plainRun = try runOpenRealm() }
    if encrypted, round % 2 == 0 { encryptedRun = try runOpenRealm(encrypted: true) }
    if let plainRun { realm = realm.best(plainRun) }
    if let encryptedRun { sealed = sealed.best(encryptedRun) }
    if let plainRun, let encryptedRun {
        insertRatios.append(encryptedRun.insert / plainRun.insert)
        lookupRatios.append(encryptedRun.lookup / plainRun.lookup)
        insertCPURatios.append(encryptedRun.insertCPU / plainRun.insertCPU)
        lookupCPURatios.append(encryptedRun.lookupCPU / plainRun.lookupCPU)
    }
    if !openRealmOnly { grdb = grdb.best(try runGRDB()) }
}
func format(_ x: Double) -> String { String(Int(x)).padding(toLength: 12, withPad: " ", startingAt: 0) }
func mib(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
if !encrypted {
    print("| workload | OpenRealm | GRDB | ratio |")
    print("|---|---:|---:|---:|")
    print("| W1 insert \(rows) objects, 10,000/write (objects/s) | \(Int(realm.insert)) | \(Int(grdb.insert)) | \(String(format: "%.2f", realm.insert / grdb.insert))× |")
    print("| W3 \(rows) primary-key lookups, every field, vs record fetch (/s) | \(Int(realm.lookup)) | \(Int(grdb.lookup)) | \(String(format: "%.2f", realm.lookup / grdb.lookup))× |")
    print("| W3 vs cached statement (/s) | \(Int(realm.lookup)) | \(Int(grdb.lookupCached)) | \(String(format: "%.2f", realm.lookup / grdb.lookupCached))× |")
    print("| file size after W1 (MiB) | \(mib(realm.bytes)) | \(mib(grdb.bytes)) | |")
} else {
    // Ratios of rates: encrypted / plain below 1 is the encryption's cost (0.91: 9% fewer per
    // second), encrypted / GRDB above 1 is encrypted OpenRealm ahead of plain SQLite.
    func ratio(_ a: Double, _ b: Double) -> String { a > 0 && b > 0 && a.isFinite && b.isFinite ? String(format: "%.2f×", a / b) : "-" }
    func rate(_ x: Double) -> String { x > 0 ? String(Int(x)) : "-" }
    /// The median of the repeats' ratios, and their range.
    func seen(_ ratios: [Double]) -> String {
        ratios.isEmpty ? "-" : String(format: "%.2f (%.2f–%.2f)×", ratios.sorted()[ratios.count / 2], ratios.min()!, ratios.max()!)
    }
    print("| workload | OpenRealm | OpenRealm encrypted | GRDB | encrypted / plain | encrypted / plain, each repeat: median (range) | encrypted / GRDB | plain / GRDB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("| W1 insert \(rows) objects, 10,000/write (objects/s) | \(rate(realm.insert)) | \(rate(sealed.insert)) | \(rate(grdb.insert)) | "
          + "\(ratio(sealed.insert, realm.insert)) | \(seen(insertRatios)) | \(ratio(sealed.insert, grdb.insert)) | \(ratio(realm.insert, grdb.insert)) |")
    if !insertOnly {
        print("| W3 \(rows) primary-key lookups, every field, vs record fetch (/s) | \(rate(realm.lookup)) | \(rate(sealed.lookup)) | \(rate(grdb.lookup)) | "
              + "\(ratio(sealed.lookup, realm.lookup)) | \(seen(lookupRatios)) | \(ratio(sealed.lookup, grdb.lookup)) | \(ratio(realm.lookup, grdb.lookup)) |")
        print("| W3 vs cached statement (/s) | \(rate(realm.lookup)) | \(rate(sealed.lookup)) | \(rate(grdb.lookupCached)) | "
              + "| | \(ratio(sealed.lookup, grdb.lookupCached)) | \(ratio(realm.lookup, grdb.lookupCached)) |")
    }
    // CPU seconds: the ratio is encrypted / plain of the time (above 1: the encryption's cost).
    func cpu(_ x: Double) -> String { x.isFinite ? String(format: "%.3f", x) : "-" }
    print("| W1 CPU seconds, user + system (least) | \(cpu(realm.insertCPU)) | \(cpu(sealed.insertCPU)) | | "
          + "\(ratio(sealed.insertCPU, realm.insertCPU)) | \(seen(insertCPURatios)) | | |")
    if !insertOnly {
        print("| W3 CPU seconds, user + system (least) | \(cpu(realm.lookupCPU)) | \(cpu(sealed.lookupCPU)) | | "
              + "\(ratio(sealed.lookupCPU, realm.lookupCPU)) | \(seen(lookupCPURatios)) | | |")
    }
    print("| file size after W1 (MiB) | \(plainOpenRealm ? mib(realm.bytes) : "-") | \(mib(sealed.bytes)) | \(openRealmOnly ? "-" : mib(grdb.bytes)) | "
          + "\(plainOpenRealm ? String(format: "%.3f×", Double(sealed.bytes) / Double(realm.bytes)) : "-") | | | |")
}
