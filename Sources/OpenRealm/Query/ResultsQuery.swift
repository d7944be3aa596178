import RealmStorage

// What a `Results` stands for (its objects' source, the predicates they must match, the
// sorts and distincts in the order they were chained) and, once read, which objects that is
// at the realm's current state.
//
// Nothing runs until the results are read. The keys are kept while the realm stays on the same
// version with no change in between (`Realm.queryStamp`): a commit, a refresh or any change
// inside a write transaction makes the next read run the query again, which is what makes
// results live.

/// How to order results: a key path (through to-one links) and a direction.
///
/// ```swift
/// let people = realm.objects(Person.self).sorted(by: [
///     SortDescriptor(keyPath: "lastName"), SortDescriptor(keyPath: "age", ascending: false),
/// ])
/// ```
public struct SortDescriptor: Sendable, Equatable, Hashable {
    /// The property to order by: a name, or a key path through to-one links (`"owner.name"`).
    public let keyPath: String
    /// Smallest first when true, largest first when false.
    public let ascending: Bool

    /// Orders by `keyPath`, smallest first unless `ascending` is false.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
    }

    /// The same key path in the other direction.
    public func reversed() -> SortDescriptor { SortDescriptor(keyPath: keyPath, ascending: !ascending) }
}

extension SortDescriptor: ExpressibleByStringLiteral {
    /// Orders by the property named in the literal, ascending: `sorted(by: ["lastName", "age"])`.
    public init(stringLiteral keyPath: String) { self.init(keyPath: keyPath) }
}

final class ResultsQuery {
    enum Source {
        /// Every object of the class.
        case table
        /// The objects a collection holds, in its order (a list, a set, linking objects),
        /// read anew at each run; `owner`: the object the collection belongs to (nil for a
        /// fixed set of objects).
        case keys(owner: ObjectBase?, (QueryEvaluator) throws(StorageError) -> [ObjectKey])

        /// The object whose collection gives the objects, if any (notifications: a change of
        /// its class can change them, and once it is deleted there are none).
        var owner: ObjectBase? {
            if case .keys(let owner, _) = self { return owner }
            return nil
        }
    }

    enum Step {
        case sort([(path: BoundPath, ascending: Bool)])
        case distinct([BoundPath])
    }

    let schema: ObjectSchema
    let source: Source
    /// Every predicate the objects must match (chained filters).
    let predicates: [BoundPredicate]
    let steps: [Step]

    private var cachedKeys: [ObjectKey] = []
    /// Instead of `cachedKeys`, while a last sort is done only as far as it was read.
    private var cachedLazy: LazySort?
    private var cachedStamp: Realm.QueryStamp?

    init(schema: ObjectSchema, source: Source, predicates: [BoundPredicate] = [], steps: [Step] = []) {
        self.schema = schema
        self.source = source
        self.predicates = predicates
        self.steps = steps
    }

    func adding(_ predicate: BoundPredicate) -> ResultsQuery {
        ResultsQuery(schema: schema, source: source, predicates: predicates + [predicate], steps: steps)
    }

    func adding(_ step: Step) -> ResultsQuery {
        var steps = self.steps
        // Only the last sort counts when sorts are chained (as in Realm), but a distinct in
        // between still sees the order before it.
        if case .sort = step, case .sort = steps.last { steps.removeLast() }
        steps.append(step)
        return ResultsQuery(schema: schema, source: source, predicates: predicates, steps: steps)
    }

    /// Whether the objects are those of the whole table that match the predicates (no
    /// collection as the source, no distinct: sorting does not change which objects).
    var readsWholeTable: Bool {
        guard case .table = source else { return false }
        return !steps.contains { if case .distinct = $0 { true } else { false } }
    }

    var predicate: BoundPredicate? {
        predicates.isEmpty ? nil : predicates.count == 1 ? predicates[0] : .and(predicates)
    }

    /// How many objects there are, at the realm's current state: from the keys when they are
    /// known, else from the index when one answers the predicate alone.
    func count(in realm: Realm) throws(StorageError) -> Int {
        if realm.queryStamp == cachedStamp { return cachedLazy?.count ?? cachedKeys.count }
        if readsWholeTable, predicate != nil {
            let evaluator = QueryEvaluator(realm: realm)
            if let binding = try evaluator.binding(schema), let count = try evaluator.indexOnlyCount(predicate, binding) { return count }
        }
        try run(in: realm)
        return cachedLazy?.count ?? cachedKeys.count
    }

    /// The key of the object at `index`, or nil past the end: a sort by one property sorts
    /// only as far as it is read (LazySort.swift).
    func key(at index: Int, in realm: Realm) throws(StorageError) -> ObjectKey? {
        if realm.queryStamp != cachedStamp { try run(in: realm) }
        guard index >= 0, index < cachedLazy?.count ?? cachedKeys.count else { return nil }
        return cachedLazy?.key(at: index) ?? cachedKeys[index]
    }

    /// The keys of the objects, at the realm's current state.
    func keys(in realm: Realm) throws(StorageError) -> [ObjectKey] {
        if realm.queryStamp != cachedStamp { try run(in: realm) }
        if let lazy = cachedLazy {
            cachedKeys = lazy.all
            cachedLazy = nil
        }
        return cachedKeys
    }

    /// Runs the query at the realm's current state; a last sort by one property of the
    /// objects is left to sort lazily.
    private func run(in realm: Realm) throws(StorageError) {
        let stamp = realm.queryStamp
        let evaluator = QueryEvaluator(realm: realm)
        var keys: [ObjectKey]
        switch source {
        case .table: keys = try evaluator.matchingKeys(predicate, of: schema)
        case .keys(_, let read): keys = try evaluator.filter(read(evaluator), of: schema, by: predicate)
        }
        var lazy: LazySort?
        for (i, step) in steps.enumerated() {
            switch step {
            case .sort(let order):
                if i == steps.count - 1, order.count == 1, order[0].path.steps.count == 1, let binding = try evaluator.binding(schema) {
                    lazy = try LazySort.make(keys, evaluator.view(binding), binding.columns[order[0].path.last.index], ascending: order[0].ascending)
                }
                if lazy == nil { keys = try sorted(keys, by: order, evaluator) }
            case .distinct(let paths): keys = try distinct(keys, by: paths, evaluator)
            }
        }
        cachedKeys = lazy == nil ? keys : []
        cachedLazy = lazy
        cachedStamp = stamp
    }

    private func sortValues(_ keys: [ObjectKey], _ paths: [BoundPath], _ evaluator: QueryEvaluator) throws(StorageError) -> [[Value]] {
        guard let binding = try evaluator.binding(schema) else { return [] }
        let table = try evaluator.view(binding)
        var rows: [[Value]] = []
        rows.reserveCapacity(keys.count)
        for key in keys {
            guard let row = try table.row(key) else { rows.append(paths.map { _ in .null }); continue }
            var values: [Value] = []
            for path in paths { values.append(try evaluator.values(path, row, binding).first ?? .null) }
            rows.append(values)
        }
        return rows
    }

    /// Stable: objects with equal values keep their order. nil sorts first ascending.
    private func sorted(_ keys: [ObjectKey], by order: [(path: BoundPath, ascending: Bool)], _ evaluator: QueryEvaluator) throws(StorageError) -> [ObjectKey] {
        let values = try sortValues(keys, order.map(\.path), evaluator)
        let positions = keys.indices.sorted { a, b in
            for (i, o) in order.enumerated() {
                let c = Self.sortOrder(values[a][i], values[b][i])
                if c != 0 { return o.ascending ? c < 0 : c > 0 }
            }
            return a < b
        }
        return positions.map { keys[$0] }
    }

    /// A total order for sorting: nil first, then values by `ValueComparison.order`; values
    /// that do not compare (a mixed property's strings and numbers) by type, NaN before numbers.
    static func sortOrder(_ a: Value, _ b: Value) -> Int {
        if let order = ValueComparison.order(a, b) { return order }
        let ra = rank(a), rb = rank(b)
        return ra < rb ? -1 : (ra > rb ? 1 : 0)
    }

    private static func rank(_ v: Value) -> Int {
        switch v {
        case .null: return 0
        case .bool: return 1
        case .double(let d) where d.isNaN: return 2
        case .float(let f) where f.isNaN: return 2
        case .decimal where Decimal128._rlmGet(_StoredValue(v)).isNaN: return 2
        case .int, .float, .double, .decimal: return 3
        case .string: return 4
        case .binary: return 5
        case .timestamp: return 6
        case .objectId: return 7
        case .uuid: return 8
        case .link, .typedLink: return 9
        }
    }

    /// The first object of each distinct combination of values, in order.
    private func distinct(_ keys: [ObjectKey], by paths: [BoundPath], _ evaluator: QueryEvaluator) throws(StorageError) -> [ObjectKey] {
        let values = try sortValues(keys, paths, evaluator)
        // Distinct as queries compare: "é" spelled two ways stays two, 1 and 1.0 are one.
        var seen = Set<[ExactValue]>()
        var result: [ObjectKey] = []
        for (i, key) in keys.enumerated() where seen.insert(values[i].map(ExactValue.init)).inserted { result.append(key) }
        return result
    }
}

extension Realm {
    /// Changes whenever what a query reads may have changed.
    struct QueryStamp: Equatable {
        var generation: Int
        var changes: Int
    }

    var queryStamp: QueryStamp {
        confinement.verify()
        return QueryStamp(generation: generation, changes: writeTransaction?.changeCount ?? 0)
    }
}
