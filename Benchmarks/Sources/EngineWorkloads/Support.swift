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

/// CPU time of the whole process (every thread: GRDB writes on its own queue), in seconds.
/// Printed beside the wall clock so that a run on a busy machine can be told apart.
public func processCPUSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) * 1e-6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

extension PersonRecord {
    /// The record the concurrency benchmarks write for `id`, as they write their `Person`.
    public static func numbered(_ id: Int) -> PersonRecord {
        PersonRecord(id: Int64(id), name: "person \(id)", age: Int64(id % 90), score: Double(id), email: nil)
    }
}
