/// Which versions readers hold, for the allocator (what may be overwritten) and the history
/// (which change sets must be kept).
///
/// Readers pin the newest committed version when they begin and unpin it when they end.
/// The newest committed version counts as pinned whether or not anyone reads it
/// (FreeSpace.swift, invariant 2).
package final class VersionRegistry: @unchecked Sendable {
    // @unchecked: `counts` is only touched under `lock`.
    private let lock = Mutex()
    private var counts: [UInt64: Int] = [:]

    package init() {}

    package func pin(_ version: VersionID) {
        lock.withLock { counts[version.value, default: 0] += 1 }
    }

    package func unpin(_ version: VersionID) {
        lock.withLock {
            guard let n = counts[version.value] else { return }
            if n <= 1 { counts[version.value] = nil } else { counts[version.value] = n - 1 }
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
