// Durable commits and readers under a writer, OpenRealm against GRDB (DatabasePool,
// `synchronous = FULL`), in one run:
//   W2   sequential 1-object durable commits (`realm.write { add }`);
//   W2g  64 tasks each committing 1-object durable writes (`RealmActor.write`, GRDB's async
//        `pool.write`): commits queued together share a sync (group commit);
//   W2t  16 threads, each with a realm of its own, committing 1-object durable writes
//        (`realm.write { add }`, GRDB's synchronous `pool.write`): the threads that commit
//        while a sync runs share the next one; reported with W2t / W2g, the rate of
//        threads against tasks;
//   W6   primary-key lookups on a reader thread, alone and while a writer thread commits
//        1-object durable writes; the share of its rate the reader keeps, the median of
//        `--runs` rounds (5), the reader pinned to a CPU that does not take the disk's
//        interrupts and the writer to the one that does, both engines alike (Pinning.swift).
//
//   swift run -c release --package-path Benchmarks ConcurrencySideBySide [--seconds N] [--tasks N] [--threads N] [--openrealm-only] [--only W2|W2g|W2t|W2g-alone|W6] [--shared-ids] [--runs N]
//
// `--only W2g` runs W2 (for W2g / W2), W2g and W2t; `--only W2t` runs W2g and W2t;
// `--only W2g-alone` runs W2g alone (for profiles of it).
//
// W2g's tasks insert ids in ranges of their own (task × 10,000,000 + n), so the writes merged
// into one commit land in as many cluster leaves; `--shared-ids` takes every id from one
// counter instead (an auto-increment key), so that they land in one.
//
// `--commits N` makes W2 (and each of W2g's tasks, N / tasks, and of W2t's threads,
// N / threads) stop after N commits instead of after the time, so that instruction counts
// (`valgrind --tool=callgrind … --only W2 --openrealm-only --commits 5000`) compare between
// builds.

import EngineWorkloads
import Foundation
import GRDB
import OpenRealm
import Synchronization

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var score = 0.0
    @Persisted var email: String?
}

/// The command line, read once (static lets: readable from any task and thread).
enum Settings {
    static let options: [String: String] = {
        var options: [String: String] = [:]
        var arguments = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = arguments.next() {
            switch argument {
            case "--seconds", "--tasks", "--threads", "--only", "--commits", "--runs": options[argument] = arguments.next()!
            case "--openrealm-only", "--shared-ids": options[argument] = "yes"
            default: preconditionFailure("unknown option \(argument); see the comment at the top of main.swift")
            }
        }
        return options
    }()
    static let duration = Double(options["--seconds"] ?? "3")!
    static let taskCount = Int(options["--tasks"] ?? "64")!
    static let threadCount = Int(options["--threads"] ?? "16")!
    static let openRealmOnly = options["--openrealm-only"] != nil
    static let only = options["--only"]
    static let commitLimit = options["--commits"].map { Int($0)! }
    static let w6Runs = Int(options["--runs"] ?? "5")!
    static let sharedIDs = options["--shared-ids"] != nil
}

/// W2g's next id: from one counter with `--shared-ids`, else from the task's own range.
let sharedCounter = Atomic<Int>(0)
func w2gID(task: Int, n: Int) -> Int {
    Settings.sharedIDs ? sharedCounter.wrappingAdd(1, ordering: .relaxed).oldValue : task * 10_000_000 + n
}
let duration = Settings.duration, taskCount = Settings.taskCount, openRealmOnly = Settings.openRealmOnly, only = Settings.only

func folder() -> URL { benchmarkFolder("concurrency-bench") }
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

func realmConfiguration(_ dir: URL) -> Realm.Configuration {
    Realm.Configuration(fileURL: dir.appendingPathComponent("bench.realm"), objectTypes: [Person.self])
}

func grdbPool(_ dir: URL) throws -> DatabasePool {
    var configuration = Configuration()
    // A reader opening its connection can hold the file lock for a moment; without a timeout
    // the writer's BEGIN IMMEDIATE then fails with SQLITE_BUSY (seen in W6), as a server
    // developer would not leave it.
    configuration.busyMode = .timeout(10)
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    let pool = try DatabasePool(path: dir.appendingPathComponent("bench.sqlite").path, configuration: configuration)
    // Again on the writer: opening a pool sets `synchronous = NORMAL` after `prepareDatabase`
    // (GRDB's setUpWALMode), which syncs at checkpoints only (checked with strace).
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    try pool.write { db in try PersonRecord.createTable(db) }
    return pool
}

// MARK: W2

func w2OpenRealm() throws -> Double {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let realm = try Realm(configuration: realmConfiguration(dir))
    var commits = 0
    let start = now()
    while Settings.commitLimit.map({ commits < $0 }) ?? (now() - start < Settings.duration) {
        try realm.write { realm.add(person(commits)) }
        commits += 1
    }
    return Double(commits) / (now() - start)
}

func w2GRDB() throws -> Double {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let pool = try grdbPool(dir)
    var commits = 0
    let start = now()
    while now() - start < Settings.duration {
        try pool.write { db in try record(commits).insert(db) }
        commits += 1
    }
    return Double(commits) / (now() - start)
}

// MARK: W2g

/// Counts W2g's commits and the syncs that made them durable, through the public event hook:
/// a sync of `groupSize` commits reports each of them with that size.
final class GroupCounter: RealmEventHandler {
    private let state = Mutex<(commits: Int, syncs: Double, bytes: Int)>((0, 0, 0))
    func realmDidCommit(_ event: RealmCommitEvent) {
        state.withLock { $0.commits += 1; $0.syncs += 1 / Double(max(event.groupSize, 1)); $0.bytes += event.bytes }
    }
    var counts: (commits: Int, syncs: Double, bytes: Int) { state.withLock { $0 } }
}

/// W2g's writes, commits and syncs in the last OpenRealm run (the issue asks for writes per
/// commit and per sync).
nonisolated(unsafe) var w2gCounts: (writes: Int, commits: Int, syncs: Double, bytes: Int)?

func w2gOpenRealm() async throws -> Double {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    var configuration = realmConfiguration(dir)
    let counter = GroupCounter()
    configuration.eventHandler = counter
    let store = RealmActor(configuration: configuration)
    defer {
        let counts = counter.counts
        w2gCounts = (w2gWrites, counts.commits, counts.syncs, counts.bytes)
    }
    let start = now()
    let commits = try await withThrowingTaskGroup(of: Int.self) { group in
        for task in 0..<Settings.taskCount {
            group.addTask {
                var n = 0
                let limit = Settings.commitLimit.map { $0 / Settings.taskCount }
                while limit.map({ n < $0 }) ?? (now() - start < Settings.duration) {
                    let id = w2gID(task: task, n: n)
                    try await store.write { realm in realm.add(person(id)) }
                    n += 1
                }
                return n
            }
        }
        return try await group.reduce(0, +)
    }
    w2gWrites = commits
    return Double(commits) / (now() - start)
}

nonisolated(unsafe) var w2gWrites = 0

func w2gGRDB() async throws -> Double {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let pool = try grdbPool(dir)
    let start = now()
    let commits = try await withThrowingTaskGroup(of: Int.self) { group in
        for task in 0..<Settings.taskCount {
            group.addTask {
                var n = 0
                while now() - start < Settings.duration {
                    let id = w2gID(task: task, n: n)
                    try await pool.write { db in try record(id).insert(db) }
                    n += 1
                }
                return n
            }
        }
        return try await group.reduce(0, +)
    }
    return Double(commits) / (now() - start)
}

// MARK: W2t

/// Runs `commit(thread, n)` on `Settings.threadCount` threads of their own until the time (or
/// each thread's share of `--commits`) is up, all starting together once each has set up
/// (`open`, on its thread); returns commits per second.
func onThreads<Context>(open: @escaping @Sendable () throws -> Context, commit: @escaping @Sendable (Context, Int, Int) throws -> Void) -> Double {
    let threads = Settings.threadCount
    let ready = DispatchGroup(), done = DispatchGroup()
    let go = DispatchSemaphore(value: 0)
    let startBits = Atomic<UInt64>(0), commits = Atomic<Int>(0)
    for thread in 0..<threads {
        ready.enter()
        done.enter()
        Thread.detachNewThread {
            defer { done.leave() }
            // Opened here: a realm is confined to the thread that opened it.
            let context = try! open()
            ready.leave()
            go.wait()
            // Read after `go`, which the store of `startBits` happens before.
            let start = Double(bitPattern: startBits.load(ordering: .relaxed))
            let limit = Settings.commitLimit.map { $0 / threads }
            var n = 0
            while limit.map({ n < $0 }) ?? (now() - start < Settings.duration) {
                try! commit(context, thread, n)
                n += 1
            }
            commits.wrappingAdd(n, ordering: .relaxed)
        }
    }
    ready.wait()
    let start = now()
    startBits.store(start.bitPattern, ordering: .relaxed)
    for _ in 0..<threads { go.signal() }
    done.wait()
    return Double(commits.load(ordering: .relaxed)) / (now() - start)
}

func w2tOpenRealm() throws -> Double {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let configuration = realmConfiguration(dir)
    // Creates the schema, so that the threads' realms open without writing, and keeps the
    // file open between them.
    let realm = try Realm(configuration: configuration)
    defer { withExtendedLifetime(realm) {} }
    return onThreads(open: { try Realm(configuration: configuration) }) { realm, thread, n in
        try realm.write { realm.add(person(thread * 10_000_000 + n)) }
    }
}

func w2tGRDB() throws -> Double {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let pool = try grdbPool(dir)
    return onThreads(open: { pool }) { pool, thread, n in
        try pool.write { db in try record(thread * 10_000_000 + n).insert(db) }
    }
}

// MARK: W6

struct ReaderResult { var alone = 0.0, withWriter = 0.0, writer = 0.0 }
let preload = 100_000

/// Runs `reader` (lookups until the deadline; returns how many) on a thread of its own, with
/// `writer` (commits until the deadline; returns how many) on another when given.
func readerAndWriter(reader: @escaping @Sendable (Double) throws -> Int, writer: (@Sendable (Double) throws -> Int)?) -> (Double, Double) {
    let done = DispatchGroup()
    let lookups = Atomic<Int>(0), commits = Atomic<Int>(0)
    let deadline = now() + Settings.duration
    done.enter()
    Thread.detachNewThread {
        Pinning.pin(to: Pinning.readerCPU)
        lookups.store(try! reader(deadline), ordering: .relaxed)
        done.leave()
    }
    if let writer {
        done.enter()
        Thread.detachNewThread {
            Pinning.pin(to: Pinning.diskCPU)
            commits.store(try! writer(deadline), ordering: .relaxed)
            done.leave()
        }
    }
    done.wait()
    return (Double(lookups.load(ordering: .relaxed)) / Settings.duration, Double(commits.load(ordering: .relaxed)) / Settings.duration)
}

func w6OpenRealm() throws -> ReaderResult {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let configuration = realmConfiguration(dir)
    do {
        let realm = try Realm(configuration: configuration)
        for start in stride(from: 0, to: preload, by: 10_000) {
            try realm.write { for id in start..<(start + 10_000) { realm.add(person(id)) } }
        }
    }
    let reader: @Sendable (Double) throws -> Int = { deadline in
        let realm = try Realm(configuration: configuration)
        var random = SeededGenerator(seed: 11)
        var lookups = 0, checksum = 0
        while now() < deadline {
            for _ in 0..<1_000 {
                let p = realm.object(ofType: Person.self, forPrimaryKey: Int.random(in: 0..<preload, using: &random))!
                checksum &+= p.id &+ p.name.utf8.count &+ p.age &+ Int(p.score) &+ (p.email?.utf8.count ?? 0)
            }
            lookups += 1_000
            realm.refresh()
        }
        precondition(checksum != 0)
        return lookups
    }
    let writer: @Sendable (Double) throws -> Int = { deadline in
        let realm = try Realm(configuration: configuration)
        var commits = 0
        while now() < deadline {
            try realm.write { realm.add(person(preload + commits)) }
            commits += 1
        }
        return commits
    }
    var result = ReaderResult()
    result.alone = readerAndWriter(reader: reader, writer: nil).0
    (result.withWriter, result.writer) = readerAndWriter(reader: reader, writer: writer)
    return result
}

func w6GRDB() throws -> ReaderResult {
    let dir = folder()
    defer { try? FileManager.default.removeItem(at: dir) }
    let pool = try grdbPool(dir)
    for start in stride(from: 0, to: preload, by: 10_000) {
        try pool.write { db in for id in start..<(start + 10_000) { try record(id).insert(db) } }
    }
    let reader: @Sendable (Double) throws -> Int = { deadline in
        var random = SeededGenerator(seed: 11)
        var lookups = 0, checksum = 0
        while now() < deadline {
            for _ in 0..<1_000 {
                let p = try pool.read { db in try PersonRecord.fetchOne(db, key: Int64.random(in: 0..<Int64(preload), using: &random))! }
                checksum &+= Int(p.id) &+ p.name.utf8.count &+ Int(p.age) &+ Int(p.score) &+ (p.email?.utf8.count ?? 0)
            }
            lookups += 1_000
        }
        precondition(checksum != 0)
        return lookups
    }
    let writer: @Sendable (Double) throws -> Int = { deadline in
        var commits = 0
        while now() < deadline {
            try pool.write { db in try record(preload + commits).insert(db) }
            commits += 1
        }
        return commits
    }
    var result = ReaderResult()
    result.alone = readerAndWriter(reader: reader, writer: nil).0
    (result.withWriter, result.writer) = readerAndWriter(reader: reader, writer: writer)
    return result
}

// MARK: Report

func row(_ name: String, _ a: Double, _ b: Double?, unit: String = "") {
    let ratio = b.map { $0 > 0 ? String(format: "%.2f×", a / $0) : "–" } ?? "–"
    print("| \(name) | \(String(format: "%.0f", a))\(unit) | \(b.map { String(format: "%.0f", $0) + unit } ?? "–") | \(ratio) |")
}

print("| workload | OpenRealm | GRDB | ratio |")
print("|---|---:|---:|---:|")
var w2Rate: Double?
if only == nil || only == "W2" || only == "W2g" {
    let realm = try w2OpenRealm()
    w2Rate = realm
    if only != "W2g" { row("W2 sequential 1-object durable commits (/s)", realm, openRealmOnly ? nil : try w2GRDB()) }
}
var w2gRate: Double?
if only == nil || only == "W2g" || only == "W2t" || only == "W2g-alone" {
    let realm = try await w2gOpenRealm()
    w2gRate = realm
    row("W2g \(taskCount) tasks, 1-object durable commits (/s)", realm, openRealmOnly ? nil : try await w2gGRDB())
    if let w2Rate { print("| W2g / W2 (OpenRealm) | \(String(format: "%.1f×", realm / w2Rate)) | | |") }
    if let counts = w2gCounts, counts.commits > 0, counts.syncs > 0 {
        print("| W2g writes per commit / commits per sync / writes per sync / KiB per commit (OpenRealm) | "
              + String(format: "%.1f / %.2f / %.1f / %.0f", Double(counts.writes) / Double(counts.commits), Double(counts.commits) / counts.syncs,
                       Double(counts.writes) / counts.syncs, Double(counts.bytes) / Double(counts.commits) / 1024) + " | | |")
    }
}
if only == nil || only == "W2g" || only == "W2t" {
    let realm = try w2tOpenRealm()
    row("W2t \(Settings.threadCount) threads, 1-object durable commits (/s)", realm, openRealmOnly ? nil : try w2tGRDB())
    if let w2gRate { print("| W2t / W2g (OpenRealm) | \(String(format: "%.2f×", realm / w2gRate)) | | |") }
}
if only == nil || only == "W6" {
    // `--runs` rounds (5 by default), the engines in turn; the median round is reported, with
    // every round's share kept.
    var rounds: [(realm: ReaderResult, grdb: ReaderResult?)] = []
    for _ in 0..<Settings.w6Runs {
        rounds.append((try w6OpenRealm(), openRealmOnly ? nil : try w6GRDB()))
    }
    func kept(_ r: ReaderResult) -> Double { r.withWriter / r.alone }
    let realmKept = rounds.map { kept($0.realm) }.sorted(), grdbKept = rounds.compactMap { $0.grdb.map(kept) }.sorted()
    let realm = rounds.map(\.realm).sorted { kept($0) < kept($1) }[rounds.count / 2]
    let grdb = openRealmOnly ? nil : rounds.compactMap(\.grdb).sorted { kept($0) < kept($1) }[rounds.count / 2]
    row("W6 reader alone (lookups/s; the median round)", realm.alone, grdb?.alone)
    row("W6 reader while a writer commits (lookups/s)", realm.withWriter, grdb?.withWriter)
    print("| W6 reader rate kept, median of \(rounds.count) | \(String(format: "%.0f%%", 100 * kept(realm))) | \(grdb.map { String(format: "%.0f%%", 100 * kept($0)) } ?? "–") | |")
    print("| W6 rounds kept | \(realmKept.map { String(format: "%.0f%%", 100 * $0) }.joined(separator: " ")) | \(grdbKept.map { String(format: "%.0f%%", 100 * $0) }.joined(separator: " ")) | |")
    row("W6 writer commits (/s)", realm.writer, grdb?.writer)
    print("| W6 threads | \(Pinning.description) | | |")
}
