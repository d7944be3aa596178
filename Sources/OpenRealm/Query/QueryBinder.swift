import Foundation
import RealmStorage

// Resolves a parsed predicate against a model class (see BoundPredicate.swift): finds every
// property of every key path, converts every constant and argument to the type it is compared
// with, and refuses what cannot mean anything (an unknown property, a string compared with a
// date, BEGINSWITH on a number, ANY on a to-one path) with the position and the reason.

struct QueryBinder {
    let arguments: [Any]
    /// Subquery variables in scope, innermost last: name and the class of the elements.
    private var variables: [(name: String, schema: ObjectSchema)] = []

    init(arguments: [Any]) {
        self.arguments = arguments
    }

    /// `predicate` resolved against `schema`.
    static func bind(_ predicate: PredicateNode, to schema: ObjectSchema, arguments: [Any]) throws(QueryError) -> BoundPredicate {
        var binder = QueryBinder(arguments: arguments)
        return try binder.bind(predicate, schema)
    }

    /// The properties a dotted key path (`"owner.name"`) names from `schema`.
    static func path(_ keyPath: String, in schema: ObjectSchema) throws(QueryError) -> BoundPath {
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !components.contains(where: \.isEmpty) else { throw QueryError(position: nil, reason: "'\(keyPath)' is not a key path") }
        return try QueryBinder(arguments: []).resolve(components, from: schema, at: 0)
    }

    mutating func bind(_ node: PredicateNode, _ schema: ObjectSchema) throws(QueryError) -> BoundPredicate {
        switch node {
        case .constant(let value): return .constant(value)
        case .not(let inner): return .not(try bind(inner, schema))
        case .and(let a, let b):
            return .and(try flattened(a, b, schema) { if case .and(let parts) = $0 { parts } else { nil } })
        case .or(let a, let b):
            return .or(try flattened(a, b, schema) { if case .or(let parts) = $0 { parts } else { nil } })
        case .comparison(let comparison):
            return .compare(try bind(comparison, schema))
        }
    }

    /// `a` and `b` bound, with the parts of those that are of the same kind (`parts`) taken
    /// in: `a AND b AND c` becomes one AND of three.
    private mutating func flattened(_ a: PredicateNode, _ b: PredicateNode, _ schema: ObjectSchema,
                                    _ parts: (BoundPredicate) -> [BoundPredicate]?) throws(QueryError) -> [BoundPredicate] {
        var result: [BoundPredicate] = []
        for node in [a, b] {
            let bound = try bind(node, schema)
            result += parts(bound) ?? [bound]
        }
        return result
    }

    // MARK: Comparisons

    private mutating func bind(_ c: Comparison, _ schema: ObjectSchema) throws(QueryError) -> BoundComparison {
        var left = c.left, right = c.right, op = c.op
        if !Self.isPropertySide(left) {
            guard Self.isPropertySide(right) else {
                throw QueryError(position: c.position, reason: "at least one side of a comparison must be a key path")
            }
            if op == .in {
                // 'x' IN tags: some element of tags equals 'x'.
                guard case .keyPath(var path) = right else {
                    throw QueryError(position: c.position, reason: "the right side of IN must be a list, an argument holding a collection, or a key path")
                }
                if path.quantifier == nil { path.quantifier = .any }
                left = .keyPath(path)
                right = c.left
                op = .equal
            } else {
                guard let flipped = Self.flipped(op) else {
                    throw QueryError(position: c.position, reason: "put the key path on the left of \(op.rawValue)")
                }
                swap(&left, &right)
                op = flipped
            }
        }
        let (boundLeft, quantifier) = try bindPropertySide(left, schema, c.position)
        let leftType = try Self.type(of: boundLeft)
        if let explicit = quantifier, !Self.reachesMany(boundLeft) {
            throw QueryError(position: c.position, reason: "\(explicit.rawValue) needs a key path through a list, set, map or linking objects")
        }
        try Self.check(op, c.options, leftType, c.position)
        var target: String?
        if case .path(let path) = boundLeft { target = path.last.objectClassName }
        let boundRight = try bindOtherSide(right, op, leftType, target, schema, c.position)
        if case .value(.null) = boundRight, op != .equal, op != .notEqual {
            throw QueryError(position: c.position, reason: "nil can only be compared with == or !=")
        }
        return BoundComparison(left: boundLeft, op: op, right: boundRight, options: c.options, quantifier: quantifier ?? .any)
    }

    private static func isPropertySide(_ e: QueryExpression) -> Bool {
        switch e {
        case .keyPath, .subqueryCount: return true
        case .constant, .list: return false
        }
    }

    /// The operator that means the same with its sides swapped, when there is one.
    private static func flipped(_ op: ComparisonOperator) -> ComparisonOperator? {
        switch op {
        case .equal, .notEqual: return op
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        case .beginsWith, .endsWith, .contains, .like, .in, .between: return nil
        }
    }

    private mutating func bindPropertySide(_ e: QueryExpression, _ schema: ObjectSchema, _ position: Int) throws(QueryError) -> (BoundOperand, Quantifier?) {
        switch e {
        case .keyPath(let k):
            return (try bindKeyPath(k, schema), k.quantifier)
        case .subqueryCount(let collection, let variable, let predicate, let at):
            let path = try resolve(collection.components, from: schema, at: collection.position)
            guard path.isToMany, path.last.linkTarget != nil, let element = path.target else {
                throw QueryError(position: at, reason: "SUBQUERY needs a list, set or linking objects of objects; \(path.name) is not one")
            }
            variables.append((variable, element))
            defer { variables.removeLast() }
            return (.subqueryCount(path, try bind(predicate, element)), nil)
        case .constant, .list:
            throw QueryError(position: position, reason: "at least one side of a comparison must be a key path")
        }
    }

    private mutating func bindKeyPath(_ k: KeyPathExpression, _ schema: ObjectSchema) throws(QueryError) -> BoundOperand {
        guard !k.components.isEmpty else { throw QueryError(position: k.position, reason: "an empty key path") }
        let path = try resolve(k.components, from: schema, at: k.position)
        // A collection without an aggregate stands for its elements (`ANY tags == 'a'`).
        guard let aggregate = k.aggregate else { return .path(path) }
        guard path.last.isList || path.last.isComputed else {
            throw QueryError(position: k.position, reason: "\(aggregate.rawValue) needs a list, set, map or linking objects; \(path.name) is a single \(Self.typeName(path.last))")
        }
        let elementIsObject = path.last.linkTarget != nil
        if aggregate == .count {
            guard k.aggregateProperty.isEmpty else {
                throw QueryError(position: k.position, reason: "nothing can follow @count")
            }
            return .aggregate(path, .count, property: nil)
        }
        var property: BoundPath? = nil
        var valueType = path.last.columnType
        if elementIsObject {
            guard !k.aggregateProperty.isEmpty, let element = path.target else {
                throw QueryError(position: k.position, reason: "\(aggregate.rawValue) over objects needs a property: \(path.name).\(aggregate.rawValue).<property>")
            }
            let p = try resolve(k.aggregateProperty, from: element, at: k.position)
            guard !p.isToMany, p.last.linkTarget == nil else {
                throw QueryError(position: k.position, reason: "\(aggregate.rawValue) needs a property holding one value per object; \(p.name) is not one")
            }
            property = p
            valueType = p.type
        } else if !k.aggregateProperty.isEmpty {
            throw QueryError(position: k.position, reason: "\(path.name) holds values, not objects: nothing can follow \(aggregate.rawValue)")
        }
        let numeric: Set<ColumnType> = [.int, .float, .double, .decimal, .mixed]
        let ordered: Set<ColumnType> = numeric.union([.timestamp])
        guard (aggregate == .sum || aggregate == .avg) ? numeric.contains(valueType) : ordered.contains(valueType) else {
            throw QueryError(position: k.position, reason: "\(aggregate.rawValue) needs numbers\(aggregate == .min || aggregate == .max ? " or dates" : ""); the values are \(valueType)")
        }
        return .aggregate(path, aggregate, property: property)
    }

    /// The properties `components` name, from `schema` (or from a subquery variable's class
    /// when the first component is `$name`).
    private func resolve(_ components: [String], from schema: ObjectSchema, at position: Int) throws(QueryError) -> BoundPath {
        var current = schema
        var names = components[...]
        if let first = names.first, first.hasPrefix("$") {
            guard let variable = variables.last(where: { $0.name == first }) else {
                throw QueryError(position: position, reason: "unknown variable \(first)")
            }
            current = variable.schema
            names = names.dropFirst()
            guard !names.isEmpty else {
                throw QueryError(position: position, reason: "compare a property of \(first), not \(first) itself")
            }
        } else if !variables.isEmpty {
            throw QueryError(position: position, reason: "inside a SUBQUERY, key paths start with its variable: correlated subqueries are not supported")
        }
        var steps: [PropertySchema] = []
        var owners: [ObjectSchema] = []
        for (i, name) in names.enumerated() {
            guard let property = current.allProperties.first(where: { $0.name == name && !$0.isHidden }) else {
                throw QueryError(position: position, reason: "class \(current.className) has no property '\(name)'")
            }
            steps.append(property)
            owners.append(current)
            if i < names.count - 1 {
                guard property.linkTarget != nil else {
                    throw QueryError(position: position, reason: "'\(name)' of \(current.className) is a \(Self.typeName(property)), not a link: '\(names[names.startIndex + i + 1])' cannot follow it")
                }
                do throws(Realm.Error) {
                    guard let target = try property.targetSchema() else {
                        throw Realm.Error(.invalidArgument, "the file no longer has it")
                    }
                    current = target
                } catch {
                    throw QueryError(position: position, reason: "class \(property.objectClassName ?? "?") has an invalid schema: \(error.message)")
                }
            }
        }
        return BoundPath(steps: steps, owners: owners)
    }

    // MARK: The other side

    /// The side compared with the key path; `target` is the class a link path leads to (an
    /// object argument must be one of it).
    private mutating func bindOtherSide(_ e: QueryExpression, _ op: ComparisonOperator, _ type: ColumnType, _ target: String?,
                                        _ schema: ObjectSchema, _ position: Int) throws(QueryError) -> BoundOperand {
        switch op {
        case .in, .between:
            let values: [Value]
            switch e {
            case .list(let items, let at):
                var converted: [Value] = []
                for item in items {
                    guard case .constant(let constant) = item else {
                        throw QueryError(position: at, reason: "the elements of a {…} list must be constants or arguments")
                    }
                    converted.append(try value(constant, as: type, target, position))
                }
                values = converted
            case .constant(.argument(let index)):
                values = try collectionArgument(index, as: type, target, position)
            case .keyPath where op == .in:
                throw QueryError(position: position, reason: "IN with key paths on both sides is not supported; use ANY")
            default:
                throw QueryError(position: position, reason: "the right side of \(op.rawValue) must be a {…} list or an argument holding a collection")
            }
            if op == .between {
                guard values.count == 2 else {
                    throw QueryError(position: position, reason: "BETWEEN needs exactly two values, {low, high}; \(values.count) given")
                }
                guard !values.contains(where: \.isNull) else {
                    throw QueryError(position: position, reason: "BETWEEN bounds cannot be nil")
                }
            }
            return .values(values)
        default:
            switch e {
            case .constant(let constant):
                return .value(try value(constant, as: type, target, position))
            case .keyPath(let k):
                guard k.quantifier == nil else {
                    throw QueryError(position: k.position, reason: "ANY, ALL and NONE go on the left side of a comparison")
                }
                let other = try bindKeyPath(k, schema)
                let otherType = try Self.type(of: other)
                guard Self.comparable(type, otherType) else {
                    throw QueryError(position: position, reason: "cannot compare a \(type) with a \(otherType)")
                }
                return other
            case .subqueryCount:
                let (other, _) = try bindPropertySide(e, schema, position)
                return other
            case .list:
                throw QueryError(position: position, reason: "a {…} list can only follow IN or BETWEEN")
            }
        }
    }

    private func collectionArgument(_ index: Int, as type: ColumnType, _ target: String?, _ position: Int) throws(QueryError) -> [Value] {
        guard index < arguments.count else {
            throw QueryError(position: position, reason: "argument \(index) is missing: \(arguments.count) given")
        }
        guard let elements = QueryArguments.elements(of: arguments[index]) else {
            throw QueryError(position: position, reason: "argument \(index) must be a collection (an array or set), not \(Swift.type(of: arguments[index]))")
        }
        var values: [Value] = []
        for element in elements { values.append(try QueryArguments.value(element, as: type, linkingTo: target, argument: index, position: position)) }
        return values
    }

    private func value(_ constant: QueryConstant, as type: ColumnType, _ target: String?, _ position: Int) throws(QueryError) -> Value {
        switch constant {
        case .argument(let index):
            guard index < arguments.count else {
                throw QueryError(position: position, reason: "argument \(index) is missing: \(arguments.count) given")
            }
            return try QueryArguments.value(arguments[index], as: type, linkingTo: target, argument: index, position: position)
        case .null: return .null
        case .bool(let b): return try QueryArguments.value(b, as: type, argument: nil, position: position)
        case .int(let i): return try QueryArguments.value(i, as: type, argument: nil, position: position)
        case .double(let d): return try QueryArguments.value(d, as: type, argument: nil, position: position)
        case .string(let s): return try QueryArguments.literal(s, as: type, position: position)
        }
    }

    // MARK: Types

    /// The type of the values an operand yields.
    private static func type(of operand: BoundOperand) throws(QueryError) -> ColumnType {
        switch operand {
        case .path(let p): return p.type
        case .aggregate(let p, let aggregate, let property):
            switch aggregate {
            case .count: return .int
            case .avg: return (property?.type ?? p.type) == .decimal ? .decimal : .double
            case .sum, .min, .max: return property?.type ?? p.type
            }
        case .subqueryCount: return .int
        case .value, .values: return .mixed
        }
    }

    /// Whether the operand can reach several values of one object.
    private static func reachesMany(_ operand: BoundOperand) -> Bool {
        switch operand {
        case .path(let p): return p.isToMany
        case .aggregate(let p, _, _): return p.steps.dropLast().contains { $0.isList || $0.isComputed }
        default: return false
        }
    }

    static func comparable(_ a: ColumnType, _ b: ColumnType) -> Bool {
        if a == b || a == .mixed || b == .mixed { return true }
        let numbers: Set<ColumnType> = [.int, .float, .double, .decimal]
        return numbers.contains(a) && numbers.contains(b)
    }

    /// Refuses operators and modifiers the types do not allow.
    private static func check(_ op: ComparisonOperator, _ options: StringOptions, _ type: ColumnType, _ position: Int) throws(QueryError) {
        let isText = type == .string || type == .binary || type == .mixed
        switch op {
        case .beginsWith, .endsWith, .contains, .like:
            guard isText, op != .like || type != .binary else {
                throw QueryError(position: position, reason: "\(op.rawValue) needs a string property; this one holds \(typeName(type))")
            }
        case .less, .lessOrEqual, .greater, .greaterOrEqual, .between:
            guard ![.bool, .link, .binary].contains(type) else {
                throw QueryError(position: position, reason: "\(op.rawValue) cannot order \(typeName(type)) values; use == or !=")
            }
        case .equal, .notEqual, .in:
            break
        }
        if !options.isEmpty && !isText {
            throw QueryError(position: position, reason: "[c] and [d] apply to strings; this property holds \(typeName(type))")
        }
    }

    static func typeName(_ property: PropertySchema) -> String { property.typeName }

    static func typeName(_ type: ColumnType) -> String {
        switch type {
        case .int: return "integers"
        case .bool: return "booleans"
        case .float, .double: return "numbers"
        case .string: return "strings"
        case .binary: return "data"
        case .timestamp: return "dates"
        case .link: return "objects"
        case .decimal: return "decimals"
        case .objectId: return "object ids"
        case .uuid: return "UUIDs"
        case .mixed: return "mixed values"
        }
    }
}
