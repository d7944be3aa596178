// Runs every workload on OpenRealm and on GRDB in one process, times each with the wall
// clock, and prints one table with the ratio (OpenRealm / GRDB; above 1 means OpenRealm is
// faster).
//
//   swift run -c release --package-path Benchmarks EngineSideBySide
//       [--rows N] [--lookups N] [--batch N] [--engines openrealm,grdb] [--repeat N]
//
// --repeat runs each measurement N times on a fresh file and keeps the best.

import EngineWorkloads
import Foundation

struct Options {
    var rows = 1_000_000
    var lookups = 1_000_000
    var batch = 10_000
    var engines = ["openrealm", "grdb"]
    var repeats = 1

    init(_ arguments: [String]) {
        var i = 1
        func next() -> String {
            i += 1
            guard i < arguments.count else { fatalError("\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--rows": rows = Int(next())!
            case "--lookups": lookups = Int(next())!
            case "--batch": batch = Int(next())!
            case "--engines": engines = next().lowercased().split(separator: ",").map(String.init)
            case "--repeat": repeats = max(1, Int(next())!)
            default: fatalError("unknown option \(arguments[i]); see the comment at the top of main.swift")
            }
            i += 1
        }
    }
}

struct Measurement {
    var insertsPerSecond: Double
    var lookupsPerSecond: Double
    var insertSeconds: Double
    var lookupSeconds: Double
    var checksum: LookupChecksum
}

/// Bytes in the files of `path` after the inserts (SQLite's WAL and shared memory included).
func directoryBytes(_ path: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.reduce(0) { total, name in
        let size = (try? FileManager.default.attributesOfItem(atPath: path + "/" + name))?[.size] as? Int
        return total + (size ?? 0)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}

let options = Options(CommandLine.arguments)
let clock = ContinuousClock()

print("Generating \(options.rows) rows and \(options.lookups) lookup keys…")
let rows = BenchmarkData.rows(count: options.rows)
let keys = BenchmarkData.lookupKeys(count: options.lookups, range: options.rows)

func measure<Engine: BenchmarkEngine>(_ engine: Engine.Type, verify: (Engine) throws -> Void) throws -> Measurement {
    var best: Measurement?
    for _ in 0..<options.repeats {
        let directory = try ScratchDirectory(prefix: "engine-bench-\(Engine.name)")
        defer { directory.remove() }
        let db = try Engine(directory: directory.path)

        let insertCPU = processCPUSeconds()
        let insertTime = try clock.measure { try db.insert(rows[...], batchSize: options.batch) }
        let insertCPUSeconds = processCPUSeconds() - insertCPU
        let count = try db.count()
        guard count == rows.count else { fatalError("\(Engine.name): \(count) rows after inserting \(rows.count)") }
        try verify(db)
        let bytes = directoryBytes(directory.path)

        var checksum = LookupChecksum()
        let lookupCPU = processCPUSeconds()
        let lookupTime = try clock.measure { checksum = try db.lookup(keys) }
        let lookupCPUSeconds = processCPUSeconds() - lookupCPU
        try db.close()

        let m = Measurement(insertsPerSecond: Double(rows.count) / insertTime.seconds,
                            lookupsPerSecond: Double(keys.count) / lookupTime.seconds,
                            insertSeconds: insertTime.seconds, lookupSeconds: lookupTime.seconds, checksum: checksum)
        print("  \(Engine.name): insert \(format(m.insertSeconds, 3)) s (CPU \(format(insertCPUSeconds, 3)) s), "
              + "lookup \(format(m.lookupSeconds, 3)) s (CPU \(format(lookupCPUSeconds, 3)) s), "
              + "files \(format(Double(bytes) / 1_048_576, 1)) MiB")
        best = best.map { b in
            Measurement(insertsPerSecond: max(b.insertsPerSecond, m.insertsPerSecond),
                        lookupsPerSecond: max(b.lookupsPerSecond, m.lookupsPerSecond),
                        insertSeconds: min(b.insertSeconds, m.insertSeconds),
                        lookupSeconds: min(b.lookupSeconds, m.lookupSeconds), checksum: m.checksum)
        } ?? m
    }
    return best!
}

func format(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }

func grouped(_ value: Double) -> String {
    let digits = String(Int(value.rounded()))
    var out = ""
    for (i, c) in digits.reversed().enumerated() {
        if i > 0 && i % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return String(out.reversed())
}

var realm: Measurement?
var grdb: Measurement?
if options.engines.contains("openrealm") {
    realm = try measure(OpenRealmEngine.self) { db in
        let objects = try db.verifiedObjectCount()
        guard objects == rows.count else { fatalError("OpenRealm verify saw \(objects) objects") }
    }
}
if options.engines.contains("grdb") {
    grdb = try measure(GRDBEngine.self) { _ in }
}
if let realm, let grdb, realm.checksum != grdb.checksum {
    fatalError("the engines read different data: checksums \(realm.checksum) and \(grdb.checksum)")
}

let e1 = "E1 insert \(grouped(Double(options.rows))) rows, \(grouped(Double(options.batch)))/tx, full sync (rows/s)"
let e2 = "E2 \(grouped(Double(options.lookups))) random key lookups, all columns (lookups/s)"
let width = max(e1.count, e2.count)
func line(_ cells: [String]) -> String {
    "| " + cells[0].padding(toLength: width, withPad: " ", startingAt: 0) + " | "
        + cells.dropFirst().map { String(repeating: " ", count: max(0, 12 - $0.count)) + $0 }.joined(separator: " | ") + " |"
}
print("")
print(line(["workload", "OpenRealm", "GRDB", "ratio"]))
print("|" + String(repeating: "-", count: width + 2) + "|" + Array(repeating: String(repeating: "-", count: 13) + ":", count: 3).joined(separator: "|") + "|")
func row(_ name: String, _ r: Double?, _ g: Double?) {
    let ratio = r.flatMap { r in g.map { format(r / $0, 2) + "×" } } ?? "–"
    print(line([name, r.map(grouped) ?? "–", g.map(grouped) ?? "–", ratio]))
}
row(e1, realm?.insertsPerSecond, grdb?.insertsPerSecond)
row(e2, realm?.lookupsPerSecond, grdb?.lookupsPerSecond)
