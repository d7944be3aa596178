// The steady state a server lives in, OpenRealm against GRDB (DatabasePool, `synchronous =
// FULL`), through the public API, in one run:
//
//   commits  1-object durable commits (`realm.write { realm.add(p) }`, one after another on
//            one thread) on a file that already holds 10,000 and 1,000,000 objects (bulk
//            loaded first, by both engines, untimed), printed as the rate of every window of
//            `--window` commits over `--commits` commits. What must hold: the 1,000,000-object
//            rate within 1.5× of the 10,000-object rate, the last window within 10% of the
//            first, and OpenRealm ≥ GRDB on the same data.
//   shrink   (only when asked) a file emptied by a mass delete, then 1-object commits: the rate
//            and both files' sizes per window while OpenRealm shrinks online (Shrink.swift).
//   size     `--updates` commits of 5 updates each to the same 1,000 objects, with (a) no
//            reader, (b) an idle `Realm` open in another process that read once (so it pins
//            one version), (c) two writer processes taking turns; the file's size every
//            2,000 commits and at the end. OpenRealm only: GRDB's WAL is checkpointed away.
//
//   swift run -c release --package-path Benchmarks SteadyStateSideBySide \
//       [--only commits|size|shrink] [--objects 10000,1000000] [--commits 100000] [--window 10000] \
//       [--updates 20000] [--openrealm-only] [--encrypted] [--keep]
//
// --encrypted: OpenRealm's file is encrypted (`Realm.Configuration.encryptionKey`), in every
// workload and in the other processes of `size` too.
//
// Both engines' files are loaded first; then their windows are taken in turn (see
// `commitWindows`), so that a drift of the machine over minutes lands in both, and the median
// of the per-window ratios is the figure to compare.

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

enum Settings {
    static let options: [String: String] = {
        var options: [String: String] = [:]
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--only", "--objects", "--commits", "--window", "--updates", "--child", "--path", "--count":
                options[argument] = arguments.next()!
            case "--openrealm-only", "--keep", "--encrypted": options[argument] = "yes"
            default: preconditionFailure("unknown option \(argument); see the comment at the top of main.swift")
            }
        }
        return options
    }()
    static let only = options["--only"]
    static let sizes = (options["--objects"] ?? "10000,1000000").split(separator: ",").map { Int($0)! }
    static let commits = Int(options["--commits"] ?? "100000")!
    static let window = Int(options["--window"] ?? "10000")!
    static let updates = Int(options["--updates"] ?? "20000")!
    static let openRealmOnly = options["--openrealm-only"] != nil
    static let encrypted = options["--encrypted"] != nil
}

func folder() -> URL { benchmarkFolder("steady-bench") }
func now() -> Double { monotonicSeconds() }

func person(_ id: Int) -> Person {
    let person = Person()
    person.id = id
    person.name = "person \(id)"
    person.age = id % 90
    person.score = Double(id)
    return person
}

func record(_ id: Int) -> PersonRecord { .numbered(id) }

func realmConfiguration(_ path: String) -> Realm.Configuration {
    Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Person.self],
                        encryptionKey: Settings.encrypted ? Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }) : nil)
}

func grdbPool(_ dir: URL) throws -> DatabasePool {
    var configuration = Configuration()
    configuration.busyMode = .timeout(10)
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    let pool = try DatabasePool(path: dir.appendingPathComponent("bench.sqlite").path, configuration: configuration)
    // Again on the writer: opening a pool sets `synchronous = NORMAL` (ConcurrencySideBySide).
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    try pool.write { db in try PersonRecord.createTable(db) }
    return pool
}

func fileSize(_ path: String) -> UInt64 {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
}

func mib(_ bytes: UInt64) -> String { String(format: "%.2f MiB", Double(bytes) / 1_048_576) }

// MARK: commits

/// One engine's file with `objects` rows bulk loaded (untimed), and its 1-object commit.
struct CommitTarget {
    let commit: (Int) throws -> Void
    let close: () -> Void
}

/// The rate of one window of 1-object commits, numbered from `first`.
func window(_ target: CommitTarget, from first: Int) throws -> Double {
    let start = now()
    for n in first..<(first + Settings.window) { try target.commit(n) }
    return Double(Settings.window) / (now() - start)
}

func openRealmTarget(objects: Int) throws -> CommitTarget {
    let dir = folder()
    let realm = try Realm(configuration: realmConfiguration(dir.appendingPathComponent("bench.realm").path))
    for start in stride(from: 0, to: objects, by: 50_000) {
        try realm.write { for id in start..<min(start + 50_000, objects) { realm.add(person(id)) } }
    }
    return CommitTarget(commit: { n in try realm.write { realm.add(person(objects + n)) } }, close: {
        // `--keep`: left for `openrealm verify` (its free list, its size).
        if Settings.options["--keep"] == nil { try? FileManager.default.removeItem(at: dir) } else { print("kept \(dir.path)") }
    })
}

func grdbTarget(objects: Int) throws -> CommitTarget {
    let dir = folder()
    let pool = try grdbPool(dir)
    for start in stride(from: 0, to: objects, by: 50_000) {
        try pool.write { db in for id in start..<min(start + 50_000, objects) { try record(id).insert(db) } }
    }
    return CommitTarget(commit: { n in try pool.write { db in try record(objects + n).insert(db) } },
                        close: { try? FileManager.default.removeItem(at: dir) })
}

/// The rates of every window, the engines' windows taken in turn (the first engine alternating
/// from window to window), so that each window's pair saw the same state of the machine: this
/// VM's sync time moves by a factor of two within minutes, which a run of one engine's 100,000
/// commits and then the other's turned into a ratio of the minutes, not of the engines.
func commitWindows(objects: Int) throws -> (realm: [Double], grdb: [Double]) {
    let realm = try openRealmTarget(objects: objects)
    defer { realm.close() }
    let grdb = Settings.openRealmOnly ? nil : try grdbTarget(objects: objects)
    defer { grdb?.close() }
    var rates: (realm: [Double], grdb: [Double]) = ([], [])
    for (i, first) in stride(from: 0, to: Settings.commits - Settings.window + 1, by: Settings.window).enumerated() {
        if let grdb, i % 2 == 1 { rates.grdb.append(try window(grdb, from: first)) }
        rates.realm.append(try window(realm, from: first))
        if let grdb, i % 2 == 0 { rates.grdb.append(try window(grdb, from: first)) }
    }
    return rates
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func reportCommits() throws {
    print("## 1-object durable commits, rate per \(Settings.window)-commit window over \(Settings.commits) commits\n")
    var medians: [Int: Double] = [:]
    for objects in Settings.sizes {
        let (realm, grdb) = try commitWindows(objects: objects)
        medians[objects] = median(realm)
        print("### \(objects) objects in the file\n")
        print("| window | OpenRealm (/s) | GRDB (/s) | ratio |")
        print("|---:|---:|---:|---:|")
        for i in realm.indices {
            let peer = i < grdb.count ? grdb[i] : nil
            print("| \(i + 1) | \(String(format: "%.0f", realm[i])) | \(peer.map { String(format: "%.0f", $0) } ?? "–") | "
                  + "\(peer.map { String(format: "%.2f×", realm[i] / $0) } ?? "–") |")
        }
        let last = realm.last ?? 0, first = realm.first ?? 1
        print("\nmedian OpenRealm \(String(format: "%.0f", median(realm)))/s, GRDB \(grdb.isEmpty ? "–" : String(format: "%.0f", median(grdb)))/s"
              + (grdb.isEmpty ? "" : String(format: " (%.2f×; median of the windows' ratios %.2f×)", median(realm) / median(grdb),
                                                median(zip(realm, grdb).map { $0 / $1 })))
              + String(format: "; last window / first: %.0f%%\n", 100 * last / first))
    }
    if let small = Settings.sizes.min(), let large = Settings.sizes.max(), small != large, let a = medians[small], let b = medians[large] {
        print(String(format: "%d-object rate / %d-object rate: %.2f×\n", small, large, a / b))
    }
}

// MARK: size

/// What the size workload's other process does (`--child reader|writer --path P --count N`).
func runChild(_ role: String) throws {
    let path = Settings.options["--path"]!
    let realm = try Realm(configuration: realmConfiguration(path))
    switch role {
    case "reader":
        // Reads once, then stays open and idle (no refresh) until the parent says stop.
        precondition(realm.objects(Person.self).count > 0)
        _ = FileManager.default.createFile(atPath: path + ".ready", contents: Data())
        while !FileManager.default.fileExists(atPath: path + ".stop") { usleep(10_000) }
    case "writer":
        _ = FileManager.default.createFile(atPath: path + ".ready", contents: Data())
        try updates(realm, count: Int(Settings.options["--count"]!)!, seed: 2, report: nil)
    default:
        preconditionFailure("unknown child role \(role)")
    }
}

/// `count` commits of 5 updates each to random objects among the first 1,000.
func updates(_ realm: Realm, count: Int, seed: UInt64, report: ((Int) -> Void)?) throws {
    var random = SeededGenerator(seed: seed)
    for n in 0..<count {
        try realm.write {
            for _ in 0..<5 {
                let p = realm.object(ofType: Person.self, forPrimaryKey: Int.random(in: 0..<1_000, using: &random))!
                p.score += 1
                p.name = "person \(p.id) update \(n)"
            }
        }
        report?(n + 1)
    }
}

func spawnChild(_ role: String, path: String, count: Int) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--child", role, "--path", path, "--count", String(count)] + (Settings.encrypted ? ["--encrypted"] : [])
    try process.run()
    while !FileManager.default.fileExists(atPath: path + ".ready") { usleep(1_000) }
    return process
}

func sizeRun(_ setting: String) throws -> (sizes: [(Int, UInt64)], rate: Double) {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("bench.realm").path
    let realm = try Realm(configuration: realmConfiguration(path))
    try realm.write { for id in 0..<1_000 { realm.add(person(id)) } }
    var sizes: [(Int, UInt64)] = [(0, fileSize(path))]
    var child: Process?
    var mine = Settings.updates
    switch setting {
    case "reader": child = try spawnChild("reader", path: path, count: 0)
    case "two writers":
        mine = Settings.updates / 2
        child = try spawnChild("writer", path: path, count: Settings.updates - mine)
    default: break
    }
    let start = now()
    try updates(realm, count: mine, seed: 1) { n in
        if n % 2_000 == 0 { sizes.append((n, fileSize(path))) }
    }
    if setting == "two writers" { child?.waitUntilExit() }
    let elapsed = now() - start
    _ = FileManager.default.createFile(atPath: path + ".stop", contents: Data())
    child?.waitUntilExit()
    sizes.append((Settings.updates, fileSize(path)))
    return (sizes, Double(Settings.updates) / elapsed)
}

func reportSizes() throws {
    print("## File size: \(Settings.updates) commits of 5 updates to the same 1,000 objects\n")
    let settings = ["no reader", "reader", "two writers"]
    var runs: [String: (sizes: [(Int, UInt64)], rate: Double)] = [:]
    for setting in settings { runs[setting] = try sizeRun(setting) }
    print("| commits (this process) | no reader | idle reader in another process | two writer processes |")
    print("|---:|---:|---:|---:|")
    let rows = runs["no reader"]!.sizes.count
    for i in 0..<rows {
        let n = runs["no reader"]!.sizes[i].0
        let cells = settings.map { setting -> String in
            // Two writers report every 2,000 of this process's half of the commits: fewer rows.
            let sizes = runs[setting]!.sizes
            if i == rows - 1 { return mib(sizes.last!.1) }
            return i < sizes.count - 1 ? mib(sizes[i].1) : "–"
        }
        print("| \(i == rows - 1 ? "end" : String(n)) | \(cells.joined(separator: " | ")) |")
    }
    print("| commits/s | " + settings.map { String(format: "%.0f", runs[$0]!.rate) }.joined(separator: " | ") + " |\n")
}

if let role = Settings.options["--child"] {
    try runChild(role)
    exit(0)
}
if Settings.only == nil || Settings.only == "commits" { try reportCommits() }
if Settings.only == nil || Settings.only == "size" { try reportSizes() }
if Settings.only == "shrink" { try reportShrink() }
