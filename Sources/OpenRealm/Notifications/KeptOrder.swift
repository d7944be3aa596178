import RealmStorage

// Results deltas that cost what changed (issue 27).
//
// An observed `Results` over a whole table, filtered by its objects' own properties and
// sorted by them (or not sorted: key order), keeps between deliveries its keys in order and,
// when sorted, each key's sort values. A delivery then reads only the objects the change sets
// name:
//
//   1. For each changed object: was it in the result (its kept sort values, or a binary search
//      of the keys when unsorted), and is it now (read its row, test the filter, read its sort
//      values). Objects deleted and inserted again under the same key are two objects.
//   2. Old positions by binary search in the kept order (sort values, then key: the stable
//      sort's ties keep key order, as the query returns the table's keys ascending); the
//      changed objects are taken out and those in the result now put back at their places.
//   3. Every unchanged object keeps its order and membership. A changed object in both
//      versions stays (no move) when it has as many unchanged objects before it as it had, and
//      keeps its order against the other staying changed objects in that gap (a longest
//      increasing run, as `ElementDelta.indices()` finds over the whole list); every other
//      changed object that left or moved is a deletion at its old position, every one that
//      arrived or moved an insertion at its new position. Staying objects the change sets
//      mark modified are modifications at their new positions.
//   4. With key paths, "modified" is narrower and reaches further: a staying changed object
//      is a modification only when a watched property of its own changed (its watched values
//      read at the anchor and now), and an object that did not change at all is one when it
//      links, along a watched key path, to an object that counts (found backwards from the
//      changed objects of the linked classes: WatchedChanges.swift). Such an object did not
//      move; its position is found by its values now (a row read and a binary search).
//
// Sort values are read, not kept: where a changed object was comes from its values at the
// version the kept order was taken at (the observation's anchor, a pinned read), where it goes
// from the current version; an unchanged object has the same values at both. A comparison is
// a row read (about a microsecond), so a sorted result of n objects costs O(k log n) row reads
// for k changed objects, plus shifting the key array (a memmove) per insertion and removal.
// Memory per observation: the keys, 8 bytes each. (A dictionary of every object's sort values,
// kept before, cost about 60 bytes per object and made `.initial` four times slower: issue 27.)
//
// Where several sets of fewest moves exist (an object that swaps with one neighbour), this
// path keeps the unchanged neighbour in place and reports the changed object as moved, where
// the full diff may pick the neighbour; both rebuild the new contents with as few moves.
//
// The full recomputation (`ResultsSubject.delta`) is used instead when the change sets cannot
// say enough, or when they name more than an eighth of the result: see
// `ResultsSubject.applicable`.

/// The sort values of one object: the first descriptor's value inline, as most sorts have one.
struct SortValues {
    var first: Value
    var rest: [Value]
}

/// How a result orders its objects, when a delivery can apply changes to it in place.
struct IncrementalPlan {
    let predicate: BoundPredicate?
    /// The sort by the objects' own properties: property index and direction; empty for
    /// unsorted results (key order).
    let order: [(index: Int, ascending: Bool)]

    /// The plan for `query`, or nil when its results cannot be kept up to date from the
    /// change sets alone: a collection as the source, a distinct, a sort or a filter that reads
    /// another object (a key path through a link, linking objects, a subquery or aggregate).
    init?(_ query: ResultsQuery) {
        guard case .table = query.source else { return nil }
        var order: [(index: Int, ascending: Bool)] = []
        for (i, step) in query.steps.enumerated() {
            guard case .sort(let descriptors) = step, i == query.steps.count - 1 else { return nil }
            for descriptor in descriptors {
                guard descriptor.path.steps.count == 1, !descriptor.path.last.isComputed, !descriptor.path.last.isList else { return nil }
                order.append((descriptor.path.last.index, descriptor.ascending))
            }
        }
        if let predicate = query.predicate, !Self.readsOnlyItsObject(predicate) { return nil }
        self.predicate = query.predicate
        self.order = order
    }

    private static func readsOnlyItsObject(_ predicate: BoundPredicate) -> Bool {
        switch predicate {
        case .constant: return true
        case .not(let inner): return readsOnlyItsObject(inner)
        case .and(let parts), .or(let parts): return parts.allSatisfy(readsOnlyItsObject)
        case .compare(let c): return readsOnlyItsObject(c.left) && readsOnlyItsObject(c.right)
        }
    }

    private static func readsOnlyItsObject(_ operand: BoundOperand) -> Bool {
        switch operand {
        case .value, .values: return true
        case .path(let path): return path.steps.count == 1 && !path.last.isComputed
        case .aggregate, .subqueryCount: return false
        }
    }

    var isSorted: Bool { !order.isEmpty }

    /// The sort values of `row`: the plan sorts by the object's own scalar properties, so
    /// each is its column's value (what `QueryEvaluator.values` gives for such a path).
    func sortValues(_ row: Row, _ binding: TableBinding) throws(StorageError) -> SortValues {
        var values = SortValues(first: .null, rest: [])
        for (i, entry) in order.enumerated() {
            let value = try row.value(binding.columns[entry.index])
            if i == 0 { values.first = value } else { values.rest.append(value) }
        }
        return values
    }

    /// Whether (`a`, `ka`) goes before (`b`, `kb`): by the sort, then by key.
    func precedes(_ a: SortValues, _ ka: ObjectKey, _ b: SortValues, _ kb: ObjectKey) -> Bool {
        for (i, entry) in order.enumerated() {
            let c = ResultsQuery.sortOrder(i == 0 ? a.first : a.rest[i - 1], i == 0 ? b.first : b.rest[i - 1])
            if c != 0 { return entry.ascending ? c < 0 : c > 0 }
        }
        return ka.value < kb.value
    }
}

/// Reads objects' sort values at one version: the version the kept order was taken at (the
/// observation's anchor) for where changed objects were, the realm's current one for where
/// they go (see the top of this file).
struct SortValueReader {
    let table: TableView
    let plan: IncrementalPlan
    let binding: TableBinding
    /// Tests the plan's filter on rows of this version (the filter reads only the row).
    let evaluator: QueryEvaluator

    /// The sort values of `key`, an object of the kept result: a version without it means the
    /// kept order is not what it should be, and the delivery compares in full instead.
    func valuesOfKept(_ key: ObjectKey) throws(StorageError) -> SortValues {
        guard let row = try table.row(key) else {
            throw StorageError(.invalidArgument, "object \(key.value) of a kept result is missing at the version read")
        }
        return try plan.sortValues(row, binding)
    }
}

/// The order a result keeps between deliveries (see the top of this file): its keys, kept in
/// the snapshot, and the table binding they were read with.
struct KeptOrder {
    /// The table binding the result was read with: another one means the schema changed.
    let binding: ObjectIdentifier

    init(_ binding: TableBinding) {
        self.binding = ObjectIdentifier(binding)
    }

    /// The position `key` (with sort values `values`; nil for unsorted results) has, or would
    /// be inserted at, in `keys`, whose objects' sort values `reader` reads.
    static func position(of key: ObjectKey, _ values: SortValues?, in keys: [ObjectKey], _ plan: IncrementalPlan,
                         _ reader: SortValueReader?) throws(StorageError) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            let before: Bool
            if let values, let reader {
                before = plan.precedes(try reader.valuesOfKept(keys[mid]), keys[mid], values, key)
            } else {
                before = keys[mid].value < key.value
            }
            if before { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Where `key` is in `keys` (the result as kept, at the version `old` reads), or nil when
    /// it is not in it. A sorted result finds it by its sort values at that version: an object
    /// the filter left out lands where another key is.
    static func index(of key: ObjectKey, in keys: [ObjectKey], _ plan: IncrementalPlan, old: SortValueReader?) throws(StorageError) -> Int? {
        var values: SortValues?
        if plan.isSorted {
            guard let old else { throw StorageError(.invalidArgument, "a sorted kept result without the version it was taken at") }
            // Not in the result then unless it existed and passed the filter: one row read,
            // where the binary search reads a row per step.
            guard let row = try old.table.row(key) else { return nil }
            if let predicate = plan.predicate, !(try old.evaluator.matches(predicate, row, old.binding)) { return nil }
            values = try plan.sortValues(row, old.binding)
        }
        let i = try position(of: key, values, in: keys, plan, old)
        return i < keys.count && keys[i] == key ? i : nil
    }

    /// The positions in `keys` (the result now) of those of `objects` that are in it, none of
    /// which changed: each is where its values now put it (a row read and a binary search). A
    /// read that fails leaves a look through the keys.
    func positions(of objects: Set<ObjectKey>, in keys: [ObjectKey], _ plan: IncrementalPlan, _ binding: TableBinding,
                   in realm: Realm) -> [Int] {
        let evaluator = QueryEvaluator(realm: realm)
        let now = (try? realm.tableView(binding.table)).map { SortValueReader(table: $0, plan: plan, binding: binding, evaluator: evaluator) }
        return objects.compactMap { key in
            guard let now else { return keys.firstIndex(of: key) }
            do {
                return try Self.index(of: key, in: keys, plan, old: now)
            } catch {
                return keys.firstIndex(of: key)
            }
        }
    }
}
