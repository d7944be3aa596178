/// Which versions readers hold, for the allocator (what may be overwritten) and the history
/// (which change sets must be kept).
///
/// Readers pin the newest committed version when they begin and unpin it when they end.
/// The newest committed version counts as pinned whether or not anyone reads it
/// (FreeSpace.swift, invariant 2).
///
/// Other processes learn the oldest pinned version (the floor) through the lock file: it is
/// published before `pin` returns, so a reader that then finds its version still the newest
/// durable one may read it (ProcessCoordination.swift).
package final class VersionRegistry: @unchecked Sendable {
    // @unchecked: `counts` and `floor` are only touched under `lock` (which is also why they skip
    // dynamic exclusivity checks).
    private let lock = Mutex()
    @exclusivity(unchecked) private var counts: [UInt64: Int] = [:]
    private let coordination: ProcessCoordination?
    /// The floor last published (0: none).
    @exclusivity(unchecked) private var floor: UInt64 = 0

    package convenience init() { self.init(coordination: nil) }

    init(coordination: ProcessCoordination?) {
        self.coordination = coordination
    }

    package func pin(_ version: VersionID) {
        lock.withLock {
            counts[version.value, default: 0] += 1
            if let coordination, floor == 0 || version.value < floor {
                floor = version.value
                coordination.publishFloor(floor)
            }
        }
    }

    package func unpin(_ version: VersionID) {
        lock.withLock {
            guard let n = counts[version.value] else { return }
            if n <= 1 { counts[version.value] = nil } else { counts[version.value] = n - 1 }
            // Raised only when the oldest pin goes; a floor lower than needed is merely cautious.
            if let coordination, counts[version.value] == nil, version.value == floor {
                floor = counts.keys.min() ?? 0
                coordination.publishFloor(floor)
            }
        }
    }

    /// The pinned versions, sorted, with `latest` included.
    package func pinned(including latest: VersionID) -> [UInt64] {
        lock.withLock {
            var versions = Array(counts.keys)
            if counts[latest.value] == nil { versions.append(latest.value) }
            return versions.sorted()
        }
    }

    /// Distinct versions readers hold now (the newest counted only if someone reads it).
    package var activeVersionCount: Int { lock.withLock { counts.count } }
}
