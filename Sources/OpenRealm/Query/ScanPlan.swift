import RealmStorage

// How a predicate runs over one table (the query planner).
//
// 1. Conditions on one scalar column of the table compared with constants become column
//    tests (ColumnTest.swift), run over each leaf's column block; everything else (key paths
//    through links and collections, aggregates, subqueries, two key paths) is evaluated object
//    by object. Within an AND, column tests run first, so the objects tested one by one are
//    only those the columns let through.
// 2. When the predicate is an AND (or a single condition) holding `==` or `IN` on a column
//    with a search index, or on the primary key, the index gives the candidate objects and
//    only they are tested. Mixed columns are left to the scan: their index orders numbers by
//    type, while queries compare 1 and 1.0 as equal. So are string comparisons with [c] or
//    [d], which the index's exact bytes cannot answer.
//
// The planner stays in this module because it works on the query's own types (predicates,
// bindings); the kernels it runs are in the engine, in RealmStorage/Scan/: a table read leaf
// by leaf and column block by block, with the sums and sort keys over a block
// (Scan/TableView+Scan.swift), and the filters over one column block (Scan/ColumnFilter.swift).
// ColumnTest.swift, ColumnAggregate.swift and LazySort.swift, beside this file, call them.

indirect enum ScanNode {
    case constant(Bool)
    case column(ColumnTest)
    case objects(BoundPredicate)
    case and([ScanNode])
    case or([ScanNode])
    case not(ScanNode)

    /// `predicate` arranged for a scan of `binding`'s table.
    static func make(_ predicate: BoundPredicate, _ binding: TableBinding) -> ScanNode {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .not(let inner): return .not(make(inner, binding))
        case .or(let parts): return .or(parts.map { make($0, binding) })
        case .and(let parts):
            let nodes = parts.map { make($0, binding) }
            // Column tests first: cheap, and they shrink what the others see.
            return .and(nodes.filter(\.isColumnTest) + nodes.filter { !$0.isColumnTest })
        case .compare(let c):
            guard case .path(let path) = c.left, path.steps.count == 1, !path.last.isList, !path.last.isComputed else {
                return .objects(predicate)
            }
            let values: [Value]
            switch c.right {
            case .value(let v): values = [v]
            case .values(let vs): values = vs
            default: return .objects(predicate)
            }
            guard c.op != .in || !values.isEmpty else { return .constant(false) }
            return .column(ColumnTest(column: binding.columns[path.last.index], op: c.op, values: values, options: c.options))
        }
    }

    var isColumnTest: Bool {
        if case .column = self { return true }
        return false
    }

    /// The conditions that must all hold (the parts of a top-level AND, or the node itself).
    var conjuncts: [ScanNode] {
        if case .and(let parts) = self { return parts }
        return [self]
    }
}

/// A plan: the index lookups that give the candidates (nil: every object is one), and what
/// the objects must pass.
struct ScanPlan {
    var index: (column: ColumnKey, values: [Value])?
    /// Candidates found through an index range (sorted by key), when no lookup applies.
    var rangeCandidates: [ObjectKey]?
    var filter: ScanNode?

    /// The plan for `predicate` over `table`.
    /// Without `ranges`, range conditions are left to the scan (a plan made only to count).
    static func make(_ predicate: BoundPredicate?, _ binding: TableBinding, _ table: TableView, ranges: Bool = true) throws(StorageError) -> ScanPlan {
        guard let predicate else { return ScanPlan(index: nil, filter: nil) }
        let node = ScanNode.make(predicate, binding)
        var rest = node.conjuncts
        for (i, part) in rest.enumerated() {
            guard case .column(let test) = part, test.options.isEmpty, test.op == .equal || test.op == .in,
                  table.hasIndex(test.column) else { continue }
            // The index finds values of the column's own type only (not 42.0 for 42).
            let type = table.info.columns[test.column.index].type
            guard type != .mixed, test.values.allSatisfy({ $0.isNull || QueryArguments.columnType(of: $0) == type }) else { continue }
            rest.remove(at: i)
            var seen = Set<ExactValue>()
            return ScanPlan(index: (test.column, test.values.filter { seen.insert(ExactValue($0)).inserted }), filter: rest.isEmpty ? nil : .and(rest))
        }
        for part in rest where ranges {
            guard case .column(let test) = part else { continue }
            guard let keys = try rangeCandidates(test, table) else { continue }
            // The condition stays in the filter: the index puts nil before every value, so a
            // range without a lower bound also gives the objects holding nil.
            return ScanPlan(index: nil, rangeCandidates: keys, filter: .and(rest))
        }
        return ScanPlan(index: nil, filter: node)
    }

    /// The objects a range condition selects through an index on an integer or date column,
    /// in key order; nil when the condition is not one, or selects more than an eighth of
    /// the table (a scan of the column is then cheaper than reading the index).
    private static func rangeCandidates(_ test: ColumnTest, _ table: TableView) throws(StorageError) -> [ObjectKey]? {
        let type = table.info.columns[test.column.index].type
        guard test.options.isEmpty, table.hasIndex(test.column), type == .int || type == .timestamp,
              test.values.allSatisfy({ QueryArguments.columnType(of: $0) == type }) else { return nil }
        let lower: TableView.Bound?, upper: TableView.Bound?
        switch test.op {
        case .less: (lower, upper) = (nil, .init(test.values[0], inclusive: false))
        case .lessOrEqual: (lower, upper) = (nil, .init(test.values[0], inclusive: true))
        case .greater: (lower, upper) = (.init(test.values[0], inclusive: false), nil)
        case .greaterOrEqual: (lower, upper) = (.init(test.values[0], inclusive: true), nil)
        case .between: (lower, upper) = (.init(test.values[0], inclusive: true), .init(test.values[1], inclusive: true))
        default: return nil
        }
        guard var keys = try table.indexRange(test.column, from: lower, to: upper, limit: try table.count() / 8) else { return nil }
        keys.sort { $0.value < $1.value }
        return keys
    }

    /// The objects the index lookups find, in key order.
    func candidates(_ table: TableView) throws(StorageError) -> [ObjectKey]? {
        if let rangeCandidates { return rangeCandidates }
        guard let index else { return nil }
        var keys: [ObjectKey] = []
        for value in index.values { keys += try table.indexLookup(index.column, value) }
        if index.values.count > 1 { keys.sort { $0.value < $1.value } }
        return keys
    }

    /// How many objects match, when the index alone answers (no other condition).
    func indexOnlyCount(_ table: TableView) throws(StorageError) -> Int? {
        guard let index, filter == nil else { return nil }
        var total = 0
        for value in index.values { total += try table.indexMatchCount(index.column, value) }
        return total
    }
}

extension QueryEvaluator {
    /// How many objects of `binding`'s table match `predicate`, when an index answers alone.
    func indexOnlyCount(_ predicate: BoundPredicate?, _ binding: TableBinding) throws(StorageError) -> Int? {
        let table = try view(binding)
        return try ScanPlan.make(predicate, binding, table, ranges: false).indexOnlyCount(table)
    }

    /// The keys of the objects of `binding`'s table that match `predicate`, in key order.
    func scan(_ predicate: BoundPredicate?, _ binding: TableBinding) throws(StorageError) -> [ObjectKey] {
        let table = try view(binding)
        let plan = try ScanPlan.make(predicate, binding, table)
        if let candidates = try plan.candidates(table) {
            guard let filter = plan.filter else { return candidates }
            var keys: [ObjectKey] = []
            for key in candidates {
                if let row = try table.row(key), try matches(filter, row, binding) { keys.append(key) }
            }
            return keys
        }
        var keys: [ObjectKey] = []
        try forEachSelection(plan.filter, table, binding) { (leaf, rows) throws(StorageError) in
            if let rows {
                for row in rows { keys.append(leaf.key(Int(row))) }
            } else {
                for row in 0..<leaf.count { keys.append(leaf.key(row)) }
            }
        }
        return keys
    }

    /// Calls `body` with each leaf of `table` and its rows that pass `filter`, ascending
    /// (nil for all of them: no filter).
    func forEachSelection(_ filter: ScanNode?, _ table: TableView, _ binding: TableBinding,
                          _ body: (ScanLeaf, [Int32]?) throws(StorageError) -> Void) throws(StorageError) {
        var rows: [Int32] = []
        try table.forEachLeaf { (leaf) throws(StorageError) -> Bool in
            guard let filter else {
                try body(leaf, nil)
                return true
            }
            rows.removeAll(keepingCapacity: true)
            for i in 0..<Int32(leaf.count) { rows.append(i) }
            try select(filter, leaf, &rows, binding)
            if !rows.isEmpty { try body(leaf, rows) }
            return true
        }
    }

    /// Keeps the rows of `rows` (ascending) that pass `node`.
    func select(_ node: ScanNode, _ leaf: ScanLeaf, _ rows: inout [Int32], _ binding: TableBinding) throws(StorageError) {
        switch node {
        case .constant(let value):
            if !value { rows.removeAll(keepingCapacity: true) }
        case .column(let test):
            try test.select(leaf.column(test.column), &rows)
        case .objects(let predicate):
            var kept: [Int32] = []
            for row in rows where try matches(predicate, leaf.row(Int(row)), binding) { kept.append(row) }
            rows = kept
        case .and(let parts):
            for part in parts where !rows.isEmpty { try select(part, leaf, &rows, binding) }
        case .or(let parts):
            var remaining = rows
            var chosen: [Int32] = []
            for part in parts where !remaining.isEmpty {
                var passed = remaining
                try select(part, leaf, &passed, binding)
                chosen += passed
                remaining = Self.subtracting(passed, from: remaining)
            }
            rows = chosen.sorted()
        case .not(let inner):
            var passed = rows
            try select(inner, leaf, &passed, binding)
            rows = Self.subtracting(passed, from: rows)
        }
    }

    /// `rows` without `removed` (both ascending; `removed` a subset).
    static func subtracting(_ removed: [Int32], from rows: [Int32]) -> [Int32] {
        guard !removed.isEmpty else { return rows }
        var result: [Int32] = []
        result.reserveCapacity(rows.count - removed.count)
        var j = 0
        for row in rows {
            if j < removed.count, removed[j] == row { j += 1 } else { result.append(row) }
        }
        return result
    }

    /// Whether the object at `row` passes `node` (for candidates an index gave).
    func matches(_ node: ScanNode, _ row: Row, _ binding: TableBinding) throws(StorageError) -> Bool {
        switch node {
        case .constant(let value): return value
        case .column(let test): return test.holds(try row.value(test.column))
        case .objects(let predicate): return try matches(predicate, row, binding)
        case .and(let parts):
            for part in parts where !(try matches(part, row, binding)) { return false }
            return true
        case .or(let parts):
            for part in parts where try matches(part, row, binding) { return true }
            return false
        case .not(let inner): return !(try matches(inner, row, binding))
        }
    }
}
