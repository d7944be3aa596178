// `--observers N --seconds S` (issue 27): N observers of different score ranges on one realm,
// each `filter("score >= lo AND score < hi").sorted(byKeyPath: "score")` over about 1/N of the
// objects, on a thread that refreshes each time commits wake it, while a writer thread commits 1-object durable
// updates of random objects as fast as it can. Windows of S seconds without observers and with
// them in turn (`--rounds R`, `runManyObservers`). Prints the writer's commit rate each way, and the lag of the deliveries: for each
// commit, the time from its `write` returning to the end of the refresh that delivered it to
// the observers (every observer it concerns has been called by then).

import Foundation
import OpenRealm

/// Commit times the writer records and the observing thread takes (under `condition`).
final class CommitClock: @unchecked Sendable {
    // @unchecked: every field is touched under `condition`'s lock.
    private let condition = NSCondition()
    private var times: [ContinuousClock.Instant] = []
    private var stopped = false

    func committed(at time: ContinuousClock.Instant) {
        condition.withLock { times.append(time) }
        condition.signal()
    }
    /// The commits recorded so far, forgotten; waits for one when there is none, as an
    /// observer sleeps until a commit wakes it (nil once the writer stopped).
    func take() -> [ContinuousClock.Instant]? {
        condition.withLock {
            while times.isEmpty && !stopped { condition.wait() }
            if times.isEmpty { return nil }
            defer { times = [] }
            return times
        }
    }
    func stop() {
        condition.withLock { stopped = true }
        condition.broadcast()
    }
}

/// Commits 1-object updates for `seconds`; returns the commits per second.
func writeFor(_ seconds: Double, _ configuration: Realm.Configuration, rows: Int, clock: CommitClock) -> Double {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var rate = 0.0
    Thread {
        let realm = try! Realm(configuration: configuration)
        var random = SystemRandomNumberGenerator()
        let start = ContinuousClock.now
        var n = 0
        while milliseconds(since: start) < seconds * 1000 {
            let id = Int.random(in: 0..<rows, using: &random), score = Int.random(in: 0..<rows, using: &random)
            try! realm.write { realm.object(ofType: Item.self, forPrimaryKey: id)!.score = score }
            clock.committed(at: .now)
            n += 1
        }
        rate = Double(n) / (milliseconds(since: start) / 1000)
        clock.stop()
        done.signal()
    }.start()
    done.wait()
    return rate
}

/// `observers` observers of different score ranges, refreshing on their own thread each time
/// commits wake them, for as long as `body` runs; returns what `body` returns. The lags of
/// their deliveries are added to `lags`, their updates counted in `deliveries`.
func withObservers<T>(_ count: Int, rows: Int, _ configuration: Realm.Configuration, clock: CommitClock,
                      lags: inout [Double], deliveries: inout Int, _ body: () -> T) -> T {
    let observing = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var newLags: [Double] = []
    nonisolated(unsafe) var updates = 0
    Thread {
        let realm = try! Realm(configuration: configuration)
        let width = rows / count
        var tokens: [NotificationToken] = []
        for i in 0..<count {
            let results = realm.objects(Item.self).filter("score >= %@ AND score < %@", i * width, (i + 1) * width).sorted(byKeyPath: "score")
            tokens.append(results.observe { change in
                if case .update = change { updates += 1 }
            })
        }
        realm.refresh()
        observing.signal()
        // Woken by commits, as a server's observer is (a loop that refreshed without waiting
        // took a core from the writer: 48% of its rate kept on two cores, 2026-11-28).
        while let pending = clock.take() {
            realm.refresh()
            let end = ContinuousClock.now
            for time in pending { newLags.append(milliseconds(since: time) - milliseconds(since: end)) }
        }
        tokens.forEach { $0.invalidate() }
        finished.signal()
    }.start()
    observing.wait()
    let result = body()
    finished.wait()
    lags += newLags
    deliveries += updates
    return result
}

/// A warm-up window alone (not counted: the first commits after the load run on a fresh
/// file), then `rounds` times a window alone and one beside the observers, then a last one
/// alone. The file grows while the writer runs, and its rate with it (2026-11-29: 1,123/s in
/// the first window alone, 679/s in the last), so each window beside the observers is judged
/// against the two alone around it, and the median of those is the rate kept.
func runManyObservers(_ count: Int, seconds: Double, rows: Int, rounds: Int, _ configuration: Realm.Configuration) {
    _ = writeFor(seconds, configuration, rows: rows, clock: CommitClock())
    var alone = [writeFor(seconds, configuration, rows: rows, clock: CommitClock())]
    var with: [Double] = []
    var lags: [Double] = []
    var deliveries = 0
    for _ in 0..<rounds {
        let clock = CommitClock()
        with.append(withObservers(count, rows: rows, configuration, clock: clock, lags: &lags, deliveries: &deliveries) {
            writeFor(seconds, configuration, rows: rows, clock: clock)
        })
        alone.append(writeFor(seconds, configuration, rows: rows, clock: CommitClock()))
    }
    let kept = with.indices.map { with[$0] / ((alone[$0] + alone[$0 + 1]) / 2) }
    lags.sort()
    print("\n| \(count) observers of \(rows / count) objects each, \(Int(seconds)) s windows | writer alone (/s) | with the observers (/s) | kept, each round | kept, median | deliveries | lag p50 ms | p99 ms | max ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(String(format: "| %d rounds | %@ | %@ | %@ | %.0f%% | %d | %.2f | %.2f | %.2f |", rounds,
                 alone.map { String(format: "%.0f", $0) }.joined(separator: " / "),
                 with.map { String(format: "%.0f", $0) }.joined(separator: " / "),
                 kept.map { String(format: "%.0f%%", $0 * 100) }.joined(separator: " "),
                 percentile(kept.sorted(), 0.5) * 100, deliveries, percentile(lags, 0.5), percentile(lags, 0.99), lags.last ?? 0))
}
