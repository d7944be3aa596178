/// Which versions readers hold, for the allocator (what may be overwritten) and the history
/// (which change sets must be kept).
///
/// Readers pin the newest committed version when they begin and unpin it when they end.
/// The newest committed version counts as pinned whether or not anyone reads it
/// (FreeSpace.swift, invariant 2).
///
/// Other processes learn every distinct pinned version through the lock file: a version is
/// published before `pin` returns, so a reader that then finds its version still the newest
/// durable one may read it, and withdrawn when its last reader unpins it
/// (ProcessCoordination.swift).
package final class VersionRegistry: @unchecked Sendable {
    // @unchecked: the coordination's side of the lock file's slot is only touched under
    // `counts`' lock, which is what keeps two threads from publishing or withdrawing at once.
    /// How many readers pin each version.
    private let counts = Locked([UInt64: Int]())
    private let coordination: ProcessCoordination?

    package convenience init() { self.init(coordination: nil) }

    init(coordination: ProcessCoordination?) {
        self.coordination = coordination
    }

    package func pin(_ version: VersionID) {
        counts.withLock { counts in
            let n = counts[version.value, default: 0]
            counts[version.value] = n + 1
            if n == 0 { coordination?.publishPin(version.value) }
        }
    }

    package func unpin(_ version: VersionID) {
        counts.withLock { counts in
            guard let n = counts[version.value] else { return }
            if n <= 1 {
                counts[version.value] = nil
                coordination?.withdrawPin(version.value)
            } else {
                counts[version.value] = n - 1
            }
        }
    }
    /// The pinned versions, sorted, with `latest` included.
    package func pinned(including latest: VersionID) -> [UInt64] {
        counts.withLock { counts in
            var versions = Array(counts.keys)
            if counts[latest.value] == nil { versions.append(latest.value) }
            return versions.sorted()
        }
    }

    /// Distinct versions readers hold now (the newest counted only if someone reads it).
    package var activeVersionCount: Int { counts.withLock { $0.count } }
}
