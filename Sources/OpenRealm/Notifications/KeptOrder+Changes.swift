import RealmStorage

// Applying one delivery's changes to a kept result (KeptOrder.swift explains the steps).

/// The positions a delivery reports (see `RealmCollectionChange.update`).
struct CollectionIndices: Equatable {
    var deletions: [Int]
    var insertions: [Int]
    var modifications: [Int]

    var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty && modifications.isEmpty }
}

/// What one changed object was and is.
private struct ChangedObject {
    let key: ObjectKey
    /// Its position in the result before, if it was in it.
    var oldIndex: Int?
    /// Its sort values now, if it is in the result now.
    var now: SortValues?
    var isIn: Bool
    /// Deleted and inserted again under its key: another object.
    let replaced: Bool
    var newIndex = 0
}

extension KeptOrder {
    /// The objects of the table that `changes` names: inserted, deleted and modified.
    static func changedKeys(_ changes: TableChanges) -> [ObjectKey] {
        var keys = Set<Int64>()
        for key in changes.inserted { keys.insert(key) }
        for key in changes.deleted { keys.insert(key) }
        for key in changes.modified { keys.insert(key) }
        return keys.sorted().map(ObjectKey.init)
    }

    /// Whether any of `changed` was in the result or is in it now (the observer must hear of
    /// it). Reads a row per changed object, and for a sorted result the rows a binary search of
    /// the kept keys reads at `anchor`, the version they were taken at.
    func concerns(_ changed: [ObjectKey], _ changes: TableChanges, keys: [ObjectKey], _ plan: IncrementalPlan, _ binding: TableBinding,
                  anchor: ReadTransaction?, in realm: Realm) throws(StorageError) -> Bool {
        let evaluator = QueryEvaluator(realm: realm)
        let table = try realm.tableView(binding.table)
        let old = try anchor.map { (read) throws(StorageError) in SortValueReader(table: try read.table(binding.table), plan: plan, binding: binding, evaluator: evaluator) }
        // In the result now first: one row read, where whether it was costs a binary search.
        for key in changed {
            if changes.deleted.contains(key.value) && !changes.inserted.contains(key.value) { continue }
            guard let row = try table.row(key) else { continue }
            if try plan.predicate.map({ (p) throws(StorageError) in try evaluator.matches(p, row, binding) }) ?? true { return true }
        }
        for key in changed where try Self.index(of: key, in: keys, plan, old: old) != nil { return true }
        return false
    }

    /// Moves `keys` (the result as kept at `anchor`) to the realm's current state, given the
    /// table's `changes` since, and returns the positions to report. `changed`:
    /// `changedKeys(changes)`; `isModified`: whether a changed object that stays counts as
    /// modified (for key paths, only when a watched property changed: WatchedChanges.swift).
    /// When a read fails it throws, with `keys` as they were.
    func apply(_ changes: TableChanges, _ changed: [ObjectKey], to keys: inout [ObjectKey], _ plan: IncrementalPlan,
               _ binding: TableBinding, anchor: ReadTransaction?, in realm: Realm,
               isModified: (ObjectKey) -> Bool) throws(StorageError) -> CollectionIndices {
        let evaluator = QueryEvaluator(realm: realm)
        let table = try realm.tableView(binding.table)
        let old = try anchor.map { (read) throws(StorageError) in SortValueReader(table: try read.table(binding.table), plan: plan, binding: binding, evaluator: evaluator) }
        let now = SortValueReader(table: table, plan: plan, binding: binding, evaluator: evaluator)

        // 1. What each changed object was and is, read before anything moves.
        var objects: [ChangedObject] = []
        objects.reserveCapacity(changed.count)
        for key in changed {
            let replaced = changes.deleted.contains(key.value) && changes.inserted.contains(key.value)
            var object = ChangedObject(key: key, oldIndex: nil, now: nil, isIn: false, replaced: replaced)
            object.oldIndex = try Self.index(of: key, in: keys, plan, old: old)
            let gone = changes.deleted.contains(key.value) && !replaced
            if !gone, let row = try table.row(key),
               try plan.predicate.map({ (p) throws(StorageError) in try evaluator.matches(p, row, binding) }) ?? true {
                object.isIn = true
                if plan.isSorted { object.now = try plan.sortValues(row, binding) }
            }
            objects.append(object)
        }

        if objects.count == 1, let old = objects[0].oldIndex, objects[0].isIn, !objects[0].replaced {
            return try Self.move(objects[0], from: old, in: &keys, plan, now, modified: isModified(objects[0].key))
        }

        // 2. Take out every changed object that was in the result, from the back.
        let removed = objects.compactMap(\.oldIndex).sorted()
        for index in removed.reversed() { keys.remove(at: index) }

        // 3. Put back those in it now, in their order: each goes after the ones put before it,
        //    so the positions found stay right.
        var arriving = objects.indices.filter { objects[$0].isIn }
        if plan.isSorted {
            arriving.sort { plan.precedes(objects[$0].now!, objects[$0].key, objects[$1].now!, objects[$1].key) }
        }
        var inserted: [Int] = []
        do {
            for i in arriving {
                // Every key compared is unchanged or put back already: its values now are right.
                let index = try Self.position(of: objects[i].key, objects[i].now, in: keys, plan, now)
                keys.insert(objects[i].key, at: index)
                objects[i].newIndex = index
                inserted.append(index)
            }
        } catch {
            // The keys as they were, for the full comparison that follows.
            for index in inserted.reversed() { keys.remove(at: index) }
            for object in objects.sorted(by: { ($0.oldIndex ?? -1) < ($1.oldIndex ?? -1) }) {
                if let old = object.oldIndex { keys.insert(object.key, at: old) }
            }
            throw error
        }

        // 4. Which changed objects in both versions stay: as many unchanged objects before them
        //    as before, and in order among the others staying in that gap.
        let added = arriving.map { objects[$0].newIndex }
        var gaps: [Int: [Int]] = [:]
        for i in arriving {
            guard let old = objects[i].oldIndex, !objects[i].replaced else { continue }
            let unchangedBefore = old - Self.count(below: old, in: removed)
            if unchangedBefore == objects[i].newIndex - Self.count(below: objects[i].newIndex, in: added) {
                gaps[unchangedBefore, default: []].append(i)
            }
        }
        var stays = Set<Int>()
        for (_, members) in gaps {
            let inOldOrder = members.sorted { objects[$0].oldIndex! < objects[$1].oldIndex! }
            for run in longestIncreasingRun(inOldOrder.map { objects[$0].newIndex }) { stays.insert(inOldOrder[run]) }
        }

        var result = CollectionIndices(deletions: [], insertions: [], modifications: [])
        for (i, object) in objects.enumerated() {
            if stays.contains(i) {
                if isModified(object.key) { result.modifications.append(object.newIndex) }
                continue
            }
            if let old = object.oldIndex { result.deletions.append(old) }
            if object.isIn { result.insertions.append(object.newIndex) }
        }
        result.deletions.sort()
        result.insertions.sort()
        result.modifications.sort()
        return result
    }

    /// One object that stays in the result, at `old` before: the keys between its old and new
    /// positions shift by one (a third of the array on average, where taking it out and putting
    /// it back moves the whole tail twice).
    private static func move(_ object: ChangedObject, from old: Int, in keys: inout [ObjectKey], _ plan: IncrementalPlan,
                             _ reader: SortValueReader, modified: Bool) throws(StorageError) -> CollectionIndices {
        // Its place among the others (all unchanged): a binary search over the keys without
        // position `old`.
        var low = 0, high = keys.count - 1
        while low < high {
            let mid = (low + high) >> 1
            let other = keys[mid < old ? mid : mid + 1]
            let before: Bool
            if let now = object.now {
                before = plan.precedes(try reader.valuesOfKept(other), other, now, object.key)
            } else {
                before = other.value < object.key.value
            }
            if before { low = mid + 1 } else { high = mid }
        }
        let new = low
        guard new != old else {
            return CollectionIndices(deletions: [], insertions: [], modifications: modified ? [new] : [])
        }
        keys.withUnsafeMutableBufferPointer { buffer in
            // `update(from:count:)` copies overlapping ranges in the safe direction.
            let base = buffer.baseAddress!
            if new > old {
                (base + old).update(from: base + old + 1, count: new - old)
            } else {
                (base + new + 1).update(from: base + new, count: old - new)
            }
            base[new] = object.key
        }
        return CollectionIndices(deletions: [old], insertions: [new], modifications: [])
    }

    /// How many of `sorted` (ascending) are below `value`.
    private static func count(below value: Int, in sorted: [Int]) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) >> 1
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
