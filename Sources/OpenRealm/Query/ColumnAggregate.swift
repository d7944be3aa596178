import RealmStorage

// Aggregates of one scalar column over the objects a predicate selects (`sum(ofProperty:)`,
// …), read from the leaves' column blocks: integer and floating-point columns are summed in
// place; other types decode each value and use `QueryEvaluator.aggregate`. Both give the same
// result (the same additions in the same order).

extension QueryEvaluator {
    /// `aggregate` of `column` over the objects of `binding`'s table matching `predicate`.
    func aggregate(_ aggregate: Aggregate, of column: ColumnKey, _ predicate: BoundPredicate?, _ binding: TableBinding) throws(StorageError) -> Value {
        let table = try view(binding)
        let plan = try ScanPlan.make(predicate, binding, table)
        if plan.index != nil || plan.rangeCandidates != nil {
            var values: [Value] = []
            for key in try scan(predicate, binding) {
                if let row = try table.row(key) { values.append(try row.value(column)) }
            }
            return Self.aggregate(aggregate, values)
        }
        var sum = ColumnSum(aggregate, type: table.info.columns[column.index].type)
        if plan.filter == nil {
            try table.forEachBlock(of: column) { (block, count) throws(StorageError) in try sum.add(block, nil, count: count) }
        } else {
            try forEachSelection(plan.filter, table, binding) { (leaf, rows) throws(StorageError) in
                try sum.add(leaf.column(column), rows, count: leaf.count)
            }
        }
        return sum.result
    }
}

/// A running aggregate over column blocks.
struct ColumnSum {
    let aggregate: Aggregate
    /// Integer, float and double columns are summed in place; the others collect their
    /// values for `QueryEvaluator.aggregate`.
    private let inPlace: Bool
    private var integerTotal: Int64 = 0
    private var doubleTotal = LaneSum()
    private var count: Int { doubleTotal.count }
    private var integerBest: Int64?
    private var doubleBest: Double?
    private var sawDouble = false
    private var values: [Value] = []

    init(_ aggregate: Aggregate, type: ColumnType) {
        self.aggregate = aggregate
        inPlace = type == .int || type == .double || type == .float
    }

    /// Adds the values of `rows` (all `count` when nil).
    mutating func add(_ column: ScanLeaf.Column, _ rows: [Int32]?, count leafCount: Int) throws(StorageError) {
        switch column {
        case .block(let view) where inPlace && view.type == .int:
            let ints = view.integers
            if let rows {
                for row in rows where !view.isNull(Int(row)) { addInteger(ints[Int(row)]) }
            } else {
                for row in 0..<view.count where !view.isNull(row) { addInteger(ints[row]) }
            }
        case .block(let view) where inPlace && (aggregate == .sum || aggregate == .avg):
            // A sum or average: one tight pass over the block.
            let before = doubleTotal.count
            view.addFloatingPoints(rows, to: &doubleTotal)
            sawDouble = sawDouble || doubleTotal.count > before
        case .block(let view) where inPlace:
            if let rows {
                for row in rows where !view.isNull(Int(row)) { addDouble(view.floatingPoint(Int(row))) }
            } else {
                for row in 0..<view.count where !view.isNull(row) { addDouble(view.floatingPoint(row)) }
            }
        case .block(let view):
            for row in rows ?? Array(0..<Int32(view.count)) { values.append(try view.value(Int(row))) }
        case .values(let column):
            for row in rows ?? Array(0..<Int32(column.count)) { add(column[Int(row)]) }
        case .uniform(let value):
            for _ in 0..<(rows?.count ?? leafCount) { add(value) }
        }
    }

    private mutating func add(_ value: Value) {
        guard inPlace else { return values.append(value) }
        switch value {
        case .int(let i): addInteger(i)
        case .double(let d): addDouble(d)
        case .float(let f): addDouble(Double(f))
        default: break
        }
    }

    private mutating func addInteger(_ i: Int64) {
        // Wrapping, as the per-object aggregate sums integers.
        integerTotal &+= i
        doubleTotal.add(Double(i))
        if aggregate == .min { integerBest = Swift.min(integerBest ?? i, i) }
        if aggregate == .max { integerBest = Swift.max(integerBest ?? i, i) }
    }

    private mutating func addDouble(_ d: Double) {
        sawDouble = true
        doubleTotal.add(d)
        // NaN is skipped by min and max, and the first of equal values (+0 and -0) is kept,
        // as in QueryEvaluator.aggregate.
        guard !d.isNaN, aggregate == .min || aggregate == .max else { return }
        if let best = doubleBest, aggregate == .min ? !(d < best) : !(d > best) { return }
        doubleBest = d
    }

    var result: Value {
        guard inPlace else { return QueryEvaluator.aggregate(aggregate, values) }
        switch aggregate {
        case .count: return .int(Int64(count))
        case .sum: return sawDouble ? .double(doubleTotal.total) : .int(integerTotal)
        case .avg: return count == 0 ? .null : .double(doubleTotal.total / Double(count))
        case .min, .max:
            if let integerBest { return .int(integerBest) }
            if let doubleBest { return .double(doubleBest) }
            return .null
        }
    }
}
