// `--large GiB`: issue 25's large case. A realm of about that many GiB (objects of ~1 KiB of
// text) is written through the public API, then `writeCopy(toFile:compression: .lz4)` of it;
// the copy is opened read-only and answers random primary-key lookups through the default
// cache. Prints the times, the sizes, and the process's anonymous memory (RssAnon, sampled
// every 20 ms: the mapped file's pages are not counted, they are the page cache's) at its
// highest during the copy and during the lookups: neither may grow with the realm.

import Foundation
import OpenRealm

final class Blob: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
}

/// The process's RssAnon now (KiB).
@Sendable func anonymousMemory() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }) else { return 0 }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
}

/// The highest RssAnon (KiB) seen while `body` runs.
func peakAnonymousMemory(_ body: () throws -> Void) rethrows -> Int {
    let current = anonymousMemory
    final class Peak: @unchecked Sendable {
        // @unchecked: `value` and `done` are touched under `lock`.
        let lock = NSLock()
        var value = 0
        var done = false
    }
    let peak = Peak()
    peak.value = current()
    let sampler = Thread {
        while peak.lock.withLock({ !peak.done }) {
            let now = current()
            peak.lock.withLock { peak.value = max(peak.value, now) }
            usleep(20_000)
        }
    }
    sampler.start()
    defer { peak.lock.withLock { peak.done = true } }
    try body()
    let now = current()
    return peak.lock.withLock { max(peak.value, now) }
}

func runLargeCopy(gib: Double, in folder: URL, lookups: Int) throws {
    let count = Int(gib * 1_048_576)
    let url = folder.appendingPathComponent("large.realm")
    let configuration = Realm.Configuration(fileURL: url, objectTypes: [Blob.self])
    let words = ["copy", "realm", "stream", "block", "server", "node", "leaf", "version", "commit", "lookup", "cache", "file"].map { Array($0.utf8) }
    /// ~1 KiB of words and hex numbers drawn from the id: text-like, so LZ4 finds some repeats.
    func text(_ id: Int) -> String {
        var bytes = Array("object \(id):".utf8)
        bytes.reserveCapacity(1040)
        var state = UInt64(truncatingIfNeeded: id) &* 0x9E37_79B9_7F4A_7C15
        let hex = Array("0123456789abcdef".utf8)
        while bytes.count < 1000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(32)
            bytes += words[Int(state >> 60) % words.count]
            for shift in stride(from: 52, to: 40, by: -4) { bytes.append(hex[Int((state >> UInt64(shift)) & 15)]) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
    let load = try seconds {
        let realm = try Realm(configuration: configuration)
        for start in stride(from: 0, to: count, by: 20_000) {
            try realm.write {
                for id in start..<min(start + 20_000, count) {
                    let blob = Blob()
                    blob.id = id
                    blob.text = text(id)
                    realm.add(blob)
                }
            }
        }
    }
    print(String(format: "%d objects of ~1 KiB written in %.1f s: %@", count, load, mib(size(url))))
    let copyURL = folder.appendingPathComponent("large.realmz")
    var copyTime = 0.0
    let before = anonymousMemory()
    let copyMemory = try peakAnonymousMemory {
        let realm = try Realm(configuration: configuration)
        copyTime = try seconds { try realm.writeCopy(toFile: copyURL, compression: .lz4) }
    }
    print(String(format: "writeCopy(compression: .lz4): %.1f s, %@ (%.2f of the realm), RssAnon %.1f MiB before, at most %.1f MiB during",
                 copyTime, mib(size(copyURL)), Double(size(copyURL)) / Double(size(url)), Double(before) / 1024, Double(copyMemory) / 1024))
    var readOnly = Realm.Configuration(fileURL: copyURL, readOnly: true, objectTypes: [Blob.self])
    readOnly.compressedCacheSize = Realm.Configuration().compressedCacheSize
    var openTime = 0.0, lookupTime = 0.0
    let lookupMemory = try peakAnonymousMemory {
        var realm: Realm!
        openTime = try seconds { realm = try Realm(configuration: readOnly) }
        var random = SystemRandomNumberGenerator()
        lookupTime = seconds {
            for _ in 0..<lookups {
                let id = Int.random(in: 0..<count, using: &random)
                guard let blob = realm.object(ofType: Blob.self, forPrimaryKey: id), blob.text.hasPrefix("object \(id):") else {
                    fatalError("lookup of \(id) in the compressed copy failed")
                }
            }
        }
    }
    print(String(format: "opened read-only in %.3f s; %d random primary-key lookups in %.2f s (%.0f µs each), cache %@, RssAnon at most %.1f MiB",
                 openTime, lookups, lookupTime, lookupTime / Double(lookups) * 1e6, mib(readOnly.compressedCacheSize), Double(lookupMemory) / 1024))
}
