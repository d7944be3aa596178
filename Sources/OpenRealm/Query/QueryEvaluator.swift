import RealmStorage

// Runs resolved predicates (BoundPredicate.swift) over the objects of one realm, at its
// current version (inside a write transaction: with the transaction's own changes).
//
// An evaluator lives for one run of a query: it keeps the table views and class bindings it
// looked up, and the inverse of every link that linking objects in the predicate need (built
// by one scan of the linking class's table, the first time).

final class QueryEvaluator {
    let realm: Realm
    /// By model class; classes read from the file (all `DynamicObject`) by name.
    private var bindings: [ObjectIdentifier: TableBinding?] = [:]
    private var storedBindings: [String: TableBinding?] = [:]
    private var views: [TableKey: TableView] = [:]
    /// Per linking-objects property (`Class.property`): target key → keys of the objects
    /// linking to it, ascending.
    private var inverses: [String: [Int64: [ObjectKey]]] = [:]

    init(realm: Realm) {
        self.realm = realm
    }

    func binding(_ schema: ObjectSchema) throws(StorageError) -> TableBinding? {
        let id = ObjectIdentifier(schema.objectType)
        if schema.isStored, let known = storedBindings[schema.className] { return known }
        if !schema.isStored, let known = bindings[id] { return known }
        let binding: TableBinding?
        do { binding = try realm.binding(for: schema) } catch {
            throw StorageError(.invalidArgument, error.message)
        }
        if schema.isStored { storedBindings[schema.className] = binding } else { bindings[id] = binding }
        return binding
    }

    func view(_ binding: TableBinding) throws(StorageError) -> TableView {
        if let view = views[binding.table] { return view }
        // Inside a write transaction, the view with every index up to date (queries use them).
        let view: TableView
        if let transaction = realm.writeTransaction { view = try transaction.table(binding.table) } else { view = try realm.tableView(binding.table) }
        views[binding.table] = view
        return view
    }

    private func target(_ property: PropertySchema) throws(StorageError) -> TableBinding? {
        let schema: ObjectSchema?
        do { schema = try property.targetSchema() } catch { throw StorageError(.invalidArgument, error.message) }
        return try schema.flatMap { schema throws(StorageError) in try binding(schema) }
    }

    // MARK: Objects

    /// The keys of the objects of `schema` matching `predicate` (every object when nil), in
    /// key order.
    func matchingKeys(_ predicate: BoundPredicate?, of schema: ObjectSchema) throws(StorageError) -> [ObjectKey] {
        guard let binding = try binding(schema) else { return [] }
        guard let predicate else { return try view(binding).keys() }
        return try scan(predicate, binding)
    }

    /// The keys among `keys` (objects of `schema`) matching `predicate`, in their order;
    /// keys of objects that no longer exist are dropped.
    func filter(_ keys: [ObjectKey], of schema: ObjectSchema, by predicate: BoundPredicate?) throws(StorageError) -> [ObjectKey] {
        guard let binding = try binding(schema) else { return [] }
        let table = try view(binding)
        var result: [ObjectKey] = []
        for key in keys {
            guard let row = try table.row(key) else { continue }
            if try predicate.map({ (p) throws(StorageError) in try matches(p, row, binding) }) ?? true { result.append(key) }
        }
        return result
    }

    // MARK: Predicates

    func matches(_ predicate: BoundPredicate, _ row: Row, _ binding: TableBinding) throws(StorageError) -> Bool {
        switch predicate {
        case .constant(let value): return value
        case .not(let inner): return !(try matches(inner, row, binding))
        case .and(let parts):
            for part in parts where !(try matches(part, row, binding)) { return false }
            return true
        case .or(let parts):
            for part in parts where try matches(part, row, binding) { return true }
            return false
        case .compare(let c):
            return try holds(c, row, binding)
        }
    }

    private func holds(_ c: BoundComparison, _ row: Row, _ binding: TableBinding) throws(StorageError) -> Bool {
        let lefts = try values(of: c.left, row, binding)
        let rights = try values(of: c.right, row, binding)
        func test(_ left: Value) -> Bool { Self.passes(c.op, left, rights, c.options) }
        switch c.quantifier {
        case .any: return lefts.contains(where: test)
        case .all: return lefts.allSatisfy(test)
        case .none: return !lefts.contains(where: test)
        }
    }

    /// Whether `value` passes `op` against the other side's values: IN any of them, BETWEEN
    /// the pair, and for the other operators any one of them (a key path on the right may
    /// reach several).
    static func passes(_ op: ComparisonOperator, _ value: Value, _ others: [Value], _ options: StringOptions) -> Bool {
        switch op {
        case .in:
            return others.contains { ValueComparison.equal(value, $0, options) }
        case .between:
            guard others.count == 2, let low = ValueComparison.order(value, others[0]),
                  let high = ValueComparison.order(value, others[1]) else { return false }
            return low >= 0 && high <= 0
        default:
            return others.contains { test(op, value, $0, options) }
        }
    }

    static func test(_ op: ComparisonOperator, _ a: Value, _ b: Value, _ options: StringOptions) -> Bool {
        switch op {
        case .equal: return ValueComparison.equal(a, b, options)
        case .notEqual: return !ValueComparison.equal(a, b, options)
        case .less: return ValueComparison.order(a, b, options) == -1
        case .lessOrEqual: return (ValueComparison.order(a, b, options) ?? 1) <= 0
        case .greater: return ValueComparison.order(a, b, options) == 1
        case .greaterOrEqual: return (ValueComparison.order(a, b, options) ?? -1) >= 0
        case .beginsWith, .endsWith, .contains, .like: return ValueComparison.matches(op, a, b, options)
        case .in: return ValueComparison.equal(a, b, options)
        case .between: return false
        }
    }

    // MARK: Operands

    private func values(of operand: BoundOperand, _ row: Row, _ binding: TableBinding) throws(StorageError) -> [Value] {
        switch operand {
        case .value(let v): return [v]
        case .values(let vs): return vs
        case .path(let path): return try values(path, row, binding)
        case .aggregate(let path, let aggregate, let property):
            let elements = try values(path, row, binding)
            if aggregate == .count { return [.int(Int64(elements.count))] }
            var inputs = elements
            if let property, let elementBinding = try target(path.last) {
                inputs = []
                let table = try view(elementBinding)
                for case .link(let key) in elements {
                    if let element = try table.row(key) { inputs += try values(property, element, elementBinding) }
                }
            }
            return [Self.aggregate(aggregate, inputs)]
        case .subqueryCount(let path, let predicate):
            guard let elementBinding = try target(path.last) else { return [.int(0)] }
            let table = try view(elementBinding)
            var count: Int64 = 0
            for case .link(let key) in try values(path, row, binding) {
                if let element = try table.row(key), try matches(predicate, element, elementBinding) { count += 1 }
            }
            return [.int(count)]
        }
    }

    /// The values `path` reaches from `row`: one for a to-one path (nil when a link on the
    /// way is nil), any number through collections.
    func values(_ path: BoundPath, _ row: Row, _ binding: TableBinding) throws(StorageError) -> [Value] {
        var out: [Value] = []
        try collect(path, 0, row, binding, &out)
        return out
    }

    private func collect(_ path: BoundPath, _ i: Int, _ row: Row, _ binding: TableBinding, _ out: inout [Value]) throws(StorageError) {
        let property = path.steps[i]
        let isLast = i == path.steps.count - 1
        var next: [Value]
        if property.isComputed {
            next = try inverse(of: property, in: path.owners[i]).map { $0[row.key.value]?.map { Value.link($0) } ?? [] } ?? []
        } else if property.isList {
            next = try row.list(binding.columns[property.index])
        } else {
            let value = try row.value(binding.columns[property.index])
            if isLast { out.append(value); return }
            guard case .link = value else {
                if !path.isToMany { out.append(.null) }
                return
            }
            next = [value]
        }
        if isLast {
            out += next
            return
        }
        guard let targetBinding = try target(property) else {
            if !path.isToMany { out.append(.null) }
            return
        }
        let table = try view(targetBinding)
        for case .link(let key) in next {
            if let linked = try table.row(key) {
                try collect(path, i + 1, linked, targetBinding, &out)
            } else if !path.isToMany {
                // A link to an object deleted in this write transaction reads as nil, as a nil link.
                out.append(.null)
            }
        }
    }

    /// For linking objects `property` of `owner`: which objects link to each object.
    private func inverse(of property: PropertySchema, in owner: ObjectSchema) throws(StorageError) -> [Int64: [ObjectKey]]? {
        guard let originType = property.linkTarget, let originName = property.originProperty else { return nil }
        let id = "\(owner.className).\(property.name)"
        if let known = inverses[id] { return known }
        let originSchema: ObjectSchema
        do { originSchema = try ObjectSchema.of(originType) } catch { throw StorageError(.invalidArgument, error.message) }
        guard let origin = originSchema.property(named: originName), origin.columnType == .link,
              let originBinding = try binding(originSchema) else {
            inverses[id] = [:]
            return [:]
        }
        var map: [Int64: [ObjectKey]] = [:]
        let column = originBinding.columns[origin.index]
        try view(originBinding).forEachRow { (row) throws(StorageError) -> Bool in
            let links = origin.isList ? try row.list(column) : [try row.value(column)]
            var seen = Set<Int64>()
            for case .link(let target) in links where seen.insert(target.value).inserted {
                map[target.value, default: []].append(row.key)
            }
            return true
        }
        inverses[id] = map
        return map
    }

    // MARK: Aggregates

    /// @sum, @avg, @min or @max of `values` (nils skipped): @sum of nothing is 0, the others nil.
    static func aggregate(_ aggregate: Aggregate, _ values: [Value]) -> Value {
        let present = values.filter { !$0.isNull }
        switch aggregate {
        case .count:
            return .int(Int64(present.count))
        case .min, .max:
            var best: Value? = nil
            // NaN has no place in an order: min and max skip it.
            for v in present where !Self.isNaN(v) {
                guard let current = best else { best = v; continue }
                if let order = ValueComparison.order(v, current), aggregate == .min ? order < 0 : order > 0 { best = v }
            }
            return best ?? .null
        case .sum, .avg:
            let numbers = present.filter { if case .int = $0 { true } else if case .double = $0 { true } else if case .float = $0 { true } else if case .decimal = $0 { true } else { false } }
            if aggregate == .avg && numbers.isEmpty { return .null }
            if numbers.contains(where: { if case .decimal = $0 { true } else { false } }) {
                var total = Decimal128(0 as Int64)
                for n in numbers { total = total + decimal(n) }
                return aggregate == .sum ? total._rlmSet().value : (total / Decimal128(Int64(numbers.count)))._rlmSet().value
            }
            if numbers.allSatisfy({ if case .int = $0 { true } else { false } }) && aggregate == .sum {
                var total: Int64 = 0
                for case .int(let i) in numbers { total &+= i }
                return .int(total)
            }
            // In lanes, as every floating-point sum (see LaneSum).
            var total = LaneSum()
            for n in numbers {
                switch n {
                case .int(let i): total.add(Double(i))
                case .double(let d): total.add(d)
                case .float(let f): total.add(Double(f))
                default: break
                }
            }
            return .double(aggregate == .sum ? total.total : total.total / Double(numbers.count))
        }
    }

    private static func isNaN(_ v: Value) -> Bool {
        switch v {
        case .double(let d): return d.isNaN
        case .float(let f): return f.isNaN
        case .decimal: return Decimal128._rlmGet(_StoredValue(v)).isNaN
        default: return false
        }
    }

    private static func decimal(_ v: Value) -> Decimal128 {
        switch v {
        case .int(let i): return Decimal128(i)
        case .double(let d): return Decimal128(d)
        case .float(let f): return Decimal128(Double(f))
        default: return Decimal128._rlmGet(_StoredValue(v))
        }
    }
}
