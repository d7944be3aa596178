// W7 (writeCopy and compaction, issue 25): a compacted copy of 1,000,000 `Person`s after
// deleting every other one, OpenRealm's `realm.writeCopy(toFile:)` against SQLite's
// `VACUUM INTO` through GRDB, both synced (SQLite does not sync what `VACUUM INTO` writes: the
// runner syncs the file and its folder and counts that time), runs taken in turn; then
// `Realm.compact(configuration:)` against `VACUUM` in place. Prints each run, the medians, and
// the sizes of the files before and after.
//
// LZ4 (issue 25, point 2): `writeCopy(toFile:compression: .lz4)` timed and sized the same way;
// then the LZ4 copy and an uncompressed copy, each opened read-only, in turn: reading every
// object (every property), and random primary-key lookups, with the LZ4 copy read in place
// through a cache of `--cache` MiB (default: the configuration's default, 4 MiB).
//
//   swift run -c release --package-path Benchmarks CopySideBySide [--rows N] [--repeat N] [--openrealm-only]
//       [--cache MiB] [--lookups N] [--large GiB]
//
// `--large GiB` runs only the large LZ4 copy (LargeCopy.swift).

import EngineWorkloads
import Foundation
import GRDB
import OpenRealm
// A compressed copy's cache counts (`Realm.compressedCounts`).
import _OpenRealmEngine

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var score = 0.0
    @Persisted var email: String?
}

var rows = 1_000_000
var repeats = 3
var openRealmOnly = false
var cacheSize = Realm.Configuration().compressedCacheSize
var lookups = 100_000
var largeGiB: Double?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--rows": rows = Int(arguments.next()!)!
    case "--repeat": repeats = Int(arguments.next()!)!
    case "--openrealm-only": openRealmOnly = true
    case "--cache": cacheSize = Int(arguments.next()!)! << 20
    case "--lookups": lookups = Int(arguments.next()!)!
    case "--large": largeGiB = Double(arguments.next()!)!
    default: preconditionFailure("unknown option \(argument); see the comment at the top of main.swift")
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("copy-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }

func size(_ url: URL) -> Int { (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0 }
func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// Syncs a file SQLite wrote without syncing, and its folder, as `writeCopy` does.
func syncFileAndFolder(_ url: URL) {
    for path in [url.path, url.deletingLastPathComponent().path] {
        let fd = open(path, O_RDONLY)
        precondition(fd >= 0, "cannot open \(path)")
        fsync(fd)
        close(fd)
    }
}

if let largeGiB {
    try runLargeCopy(gib: largeGiB, in: folder, lookups: min(lookups, 10_000))
    try? FileManager.default.removeItem(at: folder)
    exit(0)
}
let data = BenchmarkData.rows(count: rows)

// MARK: Loading and deleting every other object (not timed)

let realmURL = folder.appendingPathComponent("bench.realm")
let realmConfiguration = Realm.Configuration(fileURL: realmURL, objectTypes: [Person.self])
do {
    let realm = try Realm(configuration: realmConfiguration)
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
    for start in stride(from: 0, to: rows, by: 10_000) {
        try realm.write {
            for row in data[start..<min(start + 10_000, rows)] where row.id % 2 == 1 {
                if let person = realm.object(ofType: Person.self, forPrimaryKey: Int(row.id)) { realm.delete(person) }
            }
        }
    }
}

let sqliteURL = folder.appendingPathComponent("bench.sqlite")
var configuration = Configuration()
configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
if !openRealmOnly {
    let queue = try DatabaseQueue(path: sqliteURL.path, configuration: configuration)
    try queue.write { db in try PersonRecord.createTable(db) }
    for start in stride(from: 0, to: rows, by: 10_000) {
        try queue.write { db in
            for row in data[start..<min(start + 10_000, rows)] { try PersonRecord(row).insert(db) }
        }
    }
    try queue.write { db in try db.execute(sql: "DELETE FROM person WHERE id % 2 = 1") }
    try queue.close()
}

// MARK: Compacted copies, in turn

print("W7: \(rows) Person objects loaded, every other one deleted; \(repeats) runs each, in turn\n")
print("source files: OpenRealm \(mib(size(realmURL)))" + (openRealmOnly ? "" : ", SQLite \(mib(size(sqliteURL)))"))
var realmTimes: [Double] = [], sqliteTimes: [Double] = []
var realmCopySize = 0, sqliteCopySize = 0
let queue = openRealmOnly ? nil : try DatabaseQueue(path: sqliteURL.path, configuration: configuration)
do {
    let realm = try Realm(configuration: realmConfiguration)
    for n in 0..<repeats {
        let realmCopy = folder.appendingPathComponent("copy-\(n).realm")
        realmTimes.append(try seconds { try realm.writeCopy(toFile: realmCopy) })
        realmCopySize = size(realmCopy)
        try FileManager.default.removeItem(at: realmCopy)
        var line = String(format: "run %d: writeCopy %.3f s", n + 1, realmTimes.last!)
        if let queue {
            let sqliteCopy = folder.appendingPathComponent("copy-\(n).sqlite")
            sqliteTimes.append(try seconds {
                try queue.writeWithoutTransaction { db in try db.execute(sql: "VACUUM INTO ?", arguments: [sqliteCopy.path]) }
                syncFileAndFolder(sqliteCopy)
            })
            sqliteCopySize = size(sqliteCopy)
            try FileManager.default.removeItem(at: sqliteCopy)
            line += String(format: ", VACUUM INTO + sync %.3f s", sqliteTimes.last!)
        }
        print(line)
    }
}

print("\n| W7 | OpenRealm | SQLite (GRDB) | ratio |")
print("|---|---:|---:|---:|")
if queue != nil {
    print(String(format: "| compacted copy, synced (median s) | %.3f | %.3f | %.2f× the time |",
                 median(realmTimes), median(sqliteTimes), median(realmTimes) / median(sqliteTimes)))
    print("| copy's size | \(mib(realmCopySize)) | \(mib(sqliteCopySize)) | " + String(format: "%.2f× |", Double(realmCopySize) / Double(sqliteCopySize)))
} else {
    print(String(format: "| compacted copy, synced (median s) | %.3f | – | – |", median(realmTimes)))
    print("| copy's size | \(mib(realmCopySize)) | – | – |")
}

// MARK: LZ4-compressed copies, and reading them in place

var lz4Times: [Double] = []
var lz4Size = 0
let lz4Copy = folder.appendingPathComponent("copy.realmz"), plainCopy = folder.appendingPathComponent("copy.realm")
do {
    let realm = try Realm(configuration: realmConfiguration)
    for n in 0..<repeats {
        try? FileManager.default.removeItem(at: lz4Copy)
        lz4Times.append(try seconds { try realm.writeCopy(toFile: lz4Copy, compression: .lz4) })
        lz4Size = size(lz4Copy)
        print(String(format: "run %d: writeCopy(compression: .lz4) %.3f s", n + 1, lz4Times.last!))
    }
    try realm.writeCopy(toFile: plainCopy)
}
print("\n| W7, LZ4 | OpenRealm | reference | ratio |")
print("|---|---:|---:|---:|")
print(String(format: "| LZ4 copy, synced (median s) | %.3f | %.3f (uncompressed copy) | %.2f× the time |",
             median(lz4Times), median(realmTimes), median(lz4Times) / median(realmTimes)))
if queue != nil {
    print("| LZ4 copy's size | \(mib(lz4Size)) | \(mib(sqliteCopySize)) (SQLite's vacuumed) | "
          + String(format: "%.2f× |", Double(lz4Size) / Double(sqliteCopySize)))
}
print("| LZ4 copy's size | \(mib(lz4Size)) | \(mib(size(plainCopy))) (uncompressed copy) | "
      + String(format: "%.2f× |", Double(lz4Size) / Double(size(plainCopy))))

/// Reads every property of every object; returns a sum so that nothing is optimised away.
func readAll(_ realm: Realm) -> Int {
    var total = 0
    for person in realm.objects(Person.self) {
        total &+= person.id &+ person.name.utf8.count &+ person.age &+ Int(person.score) &+ (person.email?.utf8.count ?? 0)
    }
    return total
}
/// `lookups` random primary keys of surviving objects (the even ids), each read whole.
let keys: [Int] = {
    var random = SystemRandomNumberGenerator()
    return (0..<lookups).map { _ in Int.random(in: 0..<(rows / 2), using: &random) * 2 }
}()
func lookUp(_ realm: Realm) -> Int {
    var total = 0
    for key in keys {
        guard let person = realm.object(ofType: Person.self, forPrimaryKey: key) else { preconditionFailure("no person \(key)") }
        total &+= person.name.utf8.count &+ person.age
    }
    return total
}
var plainConfiguration = realmConfiguration
plainConfiguration.fileURL = plainCopy
plainConfiguration.readOnly = true
var lz4Configuration = plainConfiguration
lz4Configuration.fileURL = lz4Copy
lz4Configuration.compressedCacheSize = cacheSize
var scans: (plain: [Double], lz4: [Double]) = ([], []), probes: (plain: [Double], lz4: [Double]) = ([], [])
do {
    let plain = try Realm(configuration: plainConfiguration)
    let lz4 = try Realm(configuration: lz4Configuration)
    precondition(readAll(plain) == readAll(lz4), "the LZ4 copy reads other data than the uncompressed copy")
    for n in 0..<repeats {
        var sums = (0, 0)
        scans.plain.append(seconds { sums.0 = readAll(plain) })
        scans.lz4.append(seconds { sums.1 = readAll(lz4) })
        probes.plain.append(seconds { sums.0 &+= lookUp(plain) })
        probes.lz4.append(seconds { sums.1 &+= lookUp(lz4) })
        precondition(sums.0 == sums.1, "the LZ4 copy reads other data than the uncompressed copy")
        print(String(format: "run %d: every object %.3f s uncompressed, %.3f s LZ4; %d lookups %.3f s uncompressed, %.3f s LZ4",
                     n + 1, scans.plain.last!, scans.lz4.last!, lookups, probes.plain.last!, probes.lz4.last!))
    }
    if let counts = lz4.compressedCounts {
        print("LZ4 region: \(counts.onDemand ? "on demand" : "inflated (\(counts.fallbackReason ?? ""))"), budget \(counts.budget) blocks, "
              + "peak \(counts.peakResident) resident, \(counts.installs) blocks decompressed")
    }
}
print("\n| W7, read-only in place (cache \(cacheSize >> 20) MiB) | uncompressed copy | LZ4 copy | LZ4 speed / uncompressed |")
print("|---|---:|---:|---:|")
print(String(format: "| every object, every property (median s) | %.3f | %.3f | %.0f%% |",
             median(scans.plain), median(scans.lz4), 100 * median(scans.plain) / median(scans.lz4)))
print(String(format: "| %d random primary-key lookups (median s) | %.3f | %.3f | %.0f%% |",
             lookups, median(probes.plain), median(probes.lz4), 100 * median(probes.plain) / median(probes.lz4)))

// MARK: Compaction in place (once each: the second would find nothing to do)

var didCompact = false
let compacted = try seconds { didCompact = try Realm.compact(configuration: realmConfiguration) }
precondition(didCompact, "the realm was not compacted: a realm of the file is still open")
var line = String(format: "| compaction in place (s) | %.3f", compacted)
if let queue {
    let vacuumed = try seconds { try queue.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") } }
    line += String(format: " | %.3f | %.2f× the time |", vacuumed, compacted / vacuumed)
    print(line)
    print("| file after compaction | \(mib(size(realmURL))) | \(mib(size(sqliteURL))) | " + String(format: "%.2f× |", Double(size(realmURL)) / Double(size(sqliteURL))))
} else {
    print(line + " | – | – |")
    print("| file after compaction | \(mib(size(realmURL))) | – | – |")
}
