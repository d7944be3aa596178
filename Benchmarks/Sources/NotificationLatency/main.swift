// Commit → delivery latency of collection notifications (issue 27): a result of N objects
// sorted by `score` (observed with no key paths, then watching `score` through key paths),
// and one filtered by `score` and sorted by `name`, observed with a callback while another
// thread commits 1-object durable updates. Each sample is the time from the writer's commit
// returning to the observing realm's refresh returning, which delivers (or, when the commit
// cannot affect the result, skips) the change. Then the same rows in GRDB, and its
// ValueObservation's first value against `.initial` (GRDBInitial.swift).
//
//   swift run -c release --package-path Benchmarks NotificationLatency [--rows N] [--updates N]
//       [--observers N --seconds S --rounds R]   (ManyObservers.swift)

import Foundation
import OpenRealm

final class Item: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var score = 0
    @Persisted var name = ""
}

var rows = 1_000_000
var updates = 200
var observers = 0
var rounds = 3
var seconds = 10.0
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--rows": rows = Int(arguments.next()!)!
    case "--updates": updates = Int(arguments.next()!)!
    case "--observers": observers = Int(arguments.next()!)!
    case "--rounds": rounds = Int(arguments.next()!)!
    case "--seconds": seconds = Double(arguments.next()!)!
    default: preconditionFailure("unknown option \(argument); see the comment at the top of main.swift")
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notification-latency-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("items.realm"), objectTypes: [Item.self])

func milliseconds(since start: ContinuousClock.Instant) -> Double {
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15
}

/// The writer: a thread with its own realm committing one durable update per request, as
/// another part of a server would; `update` returns once the commit has.
final class Writer: @unchecked Sendable {
    // @unchecked: `pending` is written before `request` is signalled and read after the
    // writer's wait on it returns, so the semaphore orders every access.
    private let request = DispatchSemaphore(value: 0)
    private let committed = DispatchSemaphore(value: 0)
    private var pending: (id: Int, score: Int)?

    init(_ configuration: Realm.Configuration) {
        Thread { [self] in
            let realm = try! Realm(configuration: configuration)
            while true {
                request.wait()
                guard let (id, score) = pending else { break }
                try! realm.write { realm.object(ofType: Item.self, forPrimaryKey: id)!.score = score }
                committed.signal()
            }
        }.start()
    }

    func update(_ id: Int, score: Int) {
        pending = (id, score)
        request.signal()
        committed.wait()
    }

    func stop() {
        pending = nil
        request.signal()
    }
}

let realm = try Realm(configuration: configuration)
var random = SystemRandomNumberGenerator()
let letters = Array("abcdefghijklmnopqrstuvwxyz")
// The same rows go to GRDB for the `.initial` comparison (GRDBInitial.swift).
let generated = (0..<rows).map { id in
    (id: id, score: Int.random(in: 0..<rows, using: &random), name: String((0..<8).map { _ in letters.randomElement(using: &random)! }))
}
for start in stride(from: 0, to: rows, by: 100_000) {
    try realm.write {
        for row in generated[start..<min(rows, start + 100_000)] {
            let item = Item()
            item.id = row.id
            item.score = row.score
            item.name = row.name
            realm.add(item)
        }
    }
}

func percentile(_ sorted: [Double], _ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }

let writer = Writer(configuration)

@MainActor func measure(_ label: String, _ results: Results<Item>, keyPaths: [String]? = nil) {
    var deliveries = 0
    let initialStart = ContinuousClock.now
    var initial = 0.0
    let token = results.observe(keyPaths: keyPaths) { change in
        if case .initial = change { initial = milliseconds(since: initialStart) } else { deliveries += 1 }
    }
    realm.refresh()
    var samples: [Double] = []
    for _ in 0..<updates {
        let id = Int.random(in: 0..<rows)
        let score = Int.random(in: 0..<rows)
        writer.update(id, score: score)
        let start = ContinuousClock.now
        realm.refresh()
        samples.append(milliseconds(since: start))
    }
    token.invalidate()
    samples.sort()
    print("| \(label) | \(rows) | \(updates) | \(deliveries) | "
          + String(format: "%.3f | %.3f | %.3f | %.1f |", percentile(samples, 0.5), percentile(samples, 0.99), samples.last!, initial))
}

if observers > 0 {
    runManyObservers(observers, seconds: seconds, rows: rows, rounds: rounds, configuration)
    exit(0)
}

print("| observed | objects | 1-object commits | deliveries | commit → delivery p50 ms | p99 ms | max ms | .initial ms |")
print("|---|---|---|---|---|---|---|---|")
measure("sorted(byKeyPath: \"score\")", realm.objects(Item.self).sorted(byKeyPath: "score"))
measure("sorted(byKeyPath: \"score\"), keyPaths: [\"score\"]", realm.objects(Item.self).sorted(byKeyPath: "score"), keyPaths: ["score"])
measure("filter(\"score > \(rows / 2)\").sorted(byKeyPath: \"name\")",
        realm.objects(Item.self).filter("score > %@", rows / 2).sorted(byKeyPath: "name"))
writer.stop()
let grdb = try grdbInitialTimes(generated, folder: folder)
print(String(format: "\nGRDB ValueObservation, first value (.immediate), records: sorted by score %.1f ms, score > %d sorted by name %.1f ms",
             grdb.sorted, rows / 2, grdb.filtered))
print(String(format: "GRDB ValueObservation, first value (.immediate), ids only: sorted by score %.1f ms, score > %d sorted by name %.1f ms",
             grdb.sortedIDs, rows / 2, grdb.filteredIDs))
