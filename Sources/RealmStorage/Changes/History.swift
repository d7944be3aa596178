// The change history a version keeps: enough to answer "what changed since version P" for
// every version P a reader pins, and no more.
//
//   1. Entries older than the oldest pinned version are dropped (no reader can ask for them).
//   2. Two neighbouring entries (a, b] and (b, c] merge into (a, c] when no reader pins b:
//      nobody can ask for changes since b, so the boundary is not needed. A long-lived reader
//      therefore costs one merged change set, bounded by the objects changed, not one entry
//      per commit.
// The newest committed version always counts as pinned (a reader may pin it at any moment),
// so the boundary between the newest entries merges at the following commit.

enum History {
    private struct Pending {
        var from: VersionID
        var to: VersionID
        var ref: Ref
        var changes: ChangeSet?
    }

    static func advance(_ entries: [HistoryEntry], adding changes: ChangeSet, from base: VersionID, to version: VersionID,
                        pinned: [UInt64], context: TreeContext,
                        release: (Ref, NodeKind) throws(StorageError) -> Void,
                        place: ([UInt8]) throws(StorageError) -> Ref,
                        relocatingPast limit: UInt64? = nil) throws(StorageError) -> [HistoryEntry] {
        let oldest = pinned.first ?? base.value
        var pending: [Pending] = []
        for entry in entries {
            if entry.version.value <= oldest {
                try release(entry.ref, .changeSet)
            } else {
                var kept = Pending(from: entry.from, to: entry.version, ref: entry.ref, changes: nil)
                // While the file shrinks, a change set a reader keeps past the limit is written
                // again, below it (OnlineShrink.swift, point 3).
                if let limit, !entry.ref.isNone {
                    let node = try context.node(entry.ref, .changeSet)
                    if entry.ref.offset + UInt64(context.check.sealing.footprint(node.length)) > limit {
                        kept.changes = try ChangeSet.decode(node)
                        try release(entry.ref, .changeSet)
                        kept.ref = .none
                    }
                }
                pending.append(kept)
            }
        }
        pending.append(Pending(from: base, to: version, ref: .none, changes: changes))

        let pinnedSet = Set(pinned)
        var merged: [Pending] = []
        for entry in pending {
            guard var last = merged.last, !pinnedSet.contains(last.to.value) else {
                merged.append(entry)
                continue
            }
            var combined = try load(last, context)
            combined.append(try load(entry, context))
            try release(last.ref, .changeSet)
            try release(entry.ref, .changeSet)
            last = Pending(from: last.from, to: entry.to, ref: .none, changes: combined)
            merged[merged.count - 1] = last
        }
        var result: [HistoryEntry] = []
        for entry in merged {
            var ref = entry.ref
            if let changes = entry.changes, !changes.isEmpty { ref = try place(changes.encoded(version: version)) }
            result.append(HistoryEntry(from: entry.from, version: entry.to, ref: ref))
        }
        return result
    }

    private static func load(_ entry: Pending, _ context: TreeContext) throws(StorageError) -> ChangeSet {
        if let changes = entry.changes { return changes }
        guard !entry.ref.isNone else { return ChangeSet() }
        return try ChangeSet.decode(try context.node(entry.ref, .changeSet))
    }
}
