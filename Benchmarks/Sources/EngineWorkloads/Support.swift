// Small helpers every side-by-side runner uses.

import Foundation

/// A new folder of its own under the temporary directory, named for the benchmark.
public func benchmarkFolder(_ name: String) -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Seconds on the monotonic clock.
public func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

extension PersonRecord {
    /// The record the concurrency benchmarks write for `id`, as they write their `Person`.
    public static func numbered(_ id: Int) -> PersonRecord {
        PersonRecord(id: Int64(id), name: "person \(id)", age: Int64(id % 90), score: Double(id), email: nil)
    }
}
