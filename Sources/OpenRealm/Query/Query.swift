import Foundation
import RealmStorage

// Type-safe queries: `where { $0.age < 2 && $0.name.starts(with: "R") }`. The closure builds
// the same syntax tree a predicate string parses to (PredicateSyntax.swift), with the Swift
// values as arguments, so both go through one binder and one evaluator.

/// A part of a type-safe query: a property of the queried class (`$0.age`), a value computed
/// from one (`$0.dogs.count`), or a condition (`$0.age > 2`, a `Query<Bool>`).
///
/// ```swift
/// let puppies = realm.objects(Dog.self).where { $0.age < 2 && $0.name.starts(with: "R") }
/// let owners = realm.objects(Person.self).where { $0.dogs.age > 5 || $0.dogs.count == 0 }
/// ```
@dynamicMemberLookup
public struct Query<T> {
    enum Node {
        /// A key path; `collectionEnd` counts the components up to the first collection.
        case keyPath([String], collectionEnd: Int?)
        /// An aggregate of a key path.
        case expression(QueryExpression)
        case predicate(PredicateNode)
    }

    let node: Node
    /// The Swift values the tree's `%@` arguments stand for.
    let arguments: [Any]
    /// How deep `&&`, `||` and `!` nest in the condition.
    let depth: Int

    /// The deepest condition a query may build, as for predicate strings: the binder and the
    /// evaluator recurse once per level, and a deeper tree would exhaust the stack.
    static var maximumDepth: Int { 1_000 }

    init(_ node: Node, _ arguments: [Any], depth: Int = 1) {
        ensure(depth <= Self.maximumDepth,
               "A type-safe query nests more than \(Self.maximumDepth) conditions: for many values use .in([…]) instead of || chains")
        self.node = node
        self.arguments = arguments
        self.depth = depth
    }

    /// The queried object itself (the closure's argument).
    init() { self.init(.keyPath([], collectionEnd: nil), []) }

    var components: [String] {
        if case .keyPath(let components, _) = node { return components }
        misuse("A type-safe query can only follow properties from the queried object")
    }

    var collectionEnd: Int? {
        if case .keyPath(_, let end) = node { return end }
        return nil
    }

    /// The node as one side of a comparison.
    var expression: QueryExpression {
        switch node {
        case .keyPath(let components, _):
            ensure(!components.isEmpty, "Compare a property of the queried object, not the object itself")
            return .keyPath(KeyPathExpression(components: components, position: 0))
        case .expression(let e): return e
        case .predicate: misuse("A condition cannot be compared with a value")
        }
    }

    /// The node as a condition: a Bool property means `property == true`.
    var predicate: PredicateNode {
        switch node {
        case .predicate(let p): return p
        default: return .comparison(Comparison(left: expression, op: .equal, right: .constant(.bool(true)), position: 0))
        }
    }

    private func following(_ property: PropertySchema) -> (components: [String], collectionEnd: Int?) {
        let components = self.components + [property.name]
        let isCollection = property.isList || property.isComputed
        return (components, collectionEnd ?? (isCollection ? components.count : nil))
    }

    fileprivate func compared(_ op: ComparisonOperator, _ value: Any?, options: StringOptions = []) -> Query<Bool> {
        let right: QueryExpression = .constant(value.map { _ in .argument(arguments.count) } ?? .null)
        let comparison = Comparison(left: expression, op: op, right: right, options: options, position: 0)
        return Query<Bool>(.predicate(.comparison(comparison)), value.map { arguments + [$0] } ?? arguments)
    }

    fileprivate func compared<U>(_ op: ComparisonOperator, _ other: Query<U>) -> Query<Bool> {
        let right = Self.shifted(other.expression, by: arguments.count)
        let comparison = Comparison(left: expression, op: op, right: right, position: 0)
        return Query<Bool>(.predicate(.comparison(comparison)), arguments + other.arguments)
    }

    /// An aggregate of the collection this key path goes through (`$0.dogs.age.avg`), or of
    /// a collection of values (`$0.scores.avg`).
    fileprivate func aggregated<U>(_ aggregate: Aggregate) -> Query<U> {
        guard let end = collectionEnd else { misuse("\(aggregate.rawValue) needs a list, set or linking objects on the key path") }
        let path = KeyPathExpression(components: Array(components[..<end]), aggregate: aggregate,
                                     aggregateProperty: Array(components[end...]), position: 0)
        return Query<U>(.expression(.keyPath(path)), arguments)
    }

    // MARK: Argument positions

    /// `node` with every argument index moved by `offset` (to sit after another query's).
    static func shifted(_ node: PredicateNode, by offset: Int) -> PredicateNode {
        guard offset != 0 else { return node }
        switch node {
        case .constant: return node
        case .not(let inner): return .not(shifted(inner, by: offset))
        case .and(let a, let b): return .and(shifted(a, by: offset), shifted(b, by: offset))
        case .or(let a, let b): return .or(shifted(a, by: offset), shifted(b, by: offset))
        case .comparison(var c):
            c.left = shifted(c.left, by: offset)
            c.right = shifted(c.right, by: offset)
            return .comparison(c)
        }
    }

    static func shifted(_ e: QueryExpression, by offset: Int) -> QueryExpression {
        switch e {
        case .constant(.argument(let i)): return .constant(.argument(i + offset))
        case .constant, .keyPath: return e
        case .list(let items, let position): return .list(items.map { shifted($0, by: offset) }, position: position)
        case .subqueryCount(let collection, let variable, let predicate, let position):
            return .subqueryCount(collection: collection, variable: variable, predicate: shifted(predicate, by: offset), position: position)
        }
    }
}

// MARK: Key paths

extension Query where T: Object {
    /// A property of the object: `$0.name`.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
        let next = following(QueryProbe.property(keyPath, of: T.self))
        return Query<V>(.keyPath(next.components, collectionEnd: next.collectionEnd), arguments)
    }
}

/// An optional link's target class (an implementation detail of type-safe queries).
public protocol _OptionalObject {
    associatedtype Wrapped: Object
}

extension Optional: _OptionalObject where Wrapped: Object {}

extension Query where T: _OptionalObject {
    /// A property of the linked object: `$0.owner.name` (nil when there is no owner).
    public subscript<V>(dynamicMember keyPath: KeyPath<T.Wrapped, V>) -> Query<V> {
        let next = following(QueryProbe.property(keyPath, of: T.Wrapped.self))
        return Query<V>(.keyPath(next.components, collectionEnd: next.collectionEnd), arguments)
    }
}

extension Query where T: _QueryableObjects {
    /// A property of the collection's objects: `$0.dogs.age > 5` holds when some dog is older.
    public subscript<V>(dynamicMember keyPath: KeyPath<T.QueriedObject, V>) -> Query<V> {
        let next = following(QueryProbe.property(keyPath, of: T.QueriedObject.self))
        return Query<V>(.keyPath(next.components, collectionEnd: next.collectionEnd), arguments)
    }
}

// MARK: Conditions

extension Query where T == Bool {
    /// Both conditions hold: `$0.age > 2 && $0.name == "Rex"`.
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query(.predicate(.and(lhs.predicate, shifted(rhs.predicate, by: lhs.arguments.count))), lhs.arguments + rhs.arguments,
              depth: Swift.max(lhs.depth, rhs.depth) + 1)
    }

    /// Either condition holds. A query may nest `&&`, `||` and `!` at most 1,000 deep (a longer
    /// chain traps); for many alternatives use `.in([…])`.
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query(.predicate(.or(lhs.predicate, shifted(rhs.predicate, by: lhs.arguments.count))), lhs.arguments + rhs.arguments,
              depth: Swift.max(lhs.depth, rhs.depth) + 1)
    }

    /// The condition does not hold: `!$0.name.starts(with: "R")`.
    public static prefix func ! (query: Query<Bool>) -> Query<Bool> {
        Query(.predicate(.not(query.predicate)), query.arguments, depth: query.depth + 1)
    }
}

extension Query where T: _Persistable {
    /// The property equals `rhs`; `== nil` tests for nil. Through a collection
    /// (`$0.dogs.name == "Rex"`), some element's property does.
    public static func == (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compared(.equal, Self.argument(rhs)) }
    /// The property differs from `rhs`; `!= nil` tests for a value. Through a collection, some
    /// element's property does.
    public static func != (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compared(.notEqual, Self.argument(rhs)) }
    /// Two properties are equal: `$0.nickname == $0.name`.
    public static func == (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compared(.equal, rhs) }
    /// Two properties differ.
    public static func != (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compared(.notEqual, rhs) }

    /// Whether the value is one of `values`: `$0.status.in([.open, .shipped])`. Through a
    /// collection, whether some element's value is.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        compared(.in, Array(values).map { Self.argument($0) as Any })
    }

    /// A Swift value as an argument (nil for an optional holding nil).
    static func argument(_ value: T) -> Any? { ValueConversion.unwrapped(value) }
}

/// Types whose values are ordered in queries (an implementation detail).
public protocol _QueryComparable {}
extension Int: _QueryComparable {}
extension Int8: _QueryComparable {}
extension Int16: _QueryComparable {}
extension Int32: _QueryComparable {}
extension Int64: _QueryComparable {}
extension Float: _QueryComparable {}
extension Double: _QueryComparable {}
extension Date: _QueryComparable {}
extension String: _QueryComparable {}
extension Decimal128: _QueryComparable {}
extension ObjectId: _QueryComparable {}
extension UUID: _QueryComparable {}
extension AnyRealmValue: _QueryComparable {}
extension Optional: _QueryComparable where Wrapped: _QueryComparable {}

extension Query where T: _Persistable & _QueryComparable {
    /// The property is less than `rhs`: `$0.age < 2`. Through a collection, some element's is.
    public static func < (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compared(.less, argument(rhs)) }
    /// The property is less than or equal to `rhs`.
    public static func <= (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compared(.lessOrEqual, argument(rhs)) }
    /// The property is greater than `rhs`: `$0.dogs.age > 5` holds when some dog is older.
    public static func > (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compared(.greater, argument(rhs)) }
    /// The property is greater than or equal to `rhs`.
    public static func >= (lhs: Query<T>, rhs: T) -> Query<Bool> { lhs.compared(.greaterOrEqual, argument(rhs)) }
    /// One property is less than another: `$0.spent < $0.budget`.
    public static func < (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compared(.less, rhs) }
    /// One property is less than or equal to another.
    public static func <= (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compared(.lessOrEqual, rhs) }
    /// One property is greater than another.
    public static func > (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compared(.greater, rhs) }
    /// One property is greater than or equal to another.
    public static func >= (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> { lhs.compared(.greaterOrEqual, rhs) }

    /// Whether the value lies in `range` (both ends included): BETWEEN.
    ///
    /// ```swift
    /// let teens = realm.objects(Person.self).where { $0.age.contains(13...19) }
    /// ```
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> where T: Comparable {
        compared(.between, [Self.argument(range.lowerBound) as Any, Self.argument(range.upperBound) as Any])
    }

    /// Whether the value lies in `range` (its upper end excluded): `$0.age.contains(13..<20)`.
    ///
    /// The same as `$0.age >= 13 && $0.age < 20`: through a collection
    /// (`$0.dogs.age.contains(1..<3)`) the two bounds are tested separately, and may hold for
    /// different elements; a `ClosedRange` tests each element against both.
    public func contains(_ range: Range<T>) -> Query<Bool> where T: Comparable {
        self >= range.lowerBound && self < range.upperBound
    }
}

// MARK: Strings

/// String types in queries (an implementation detail).
public protocol _QueryString {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped == String {}

extension Query where T: _QueryString {
    /// Whether the string starts with `prefix`.
    public func starts(with prefix: String, options: StringOptions = []) -> Query<Bool> { compared(.beginsWith, prefix, options: options) }
    /// Whether the string ends with `suffix`.
    public func ends(with suffix: String, options: StringOptions = []) -> Query<Bool> { compared(.endsWith, suffix, options: options) }
    /// Whether the string contains `part`.
    public func contains(_ part: String, options: StringOptions = []) -> Query<Bool> { compared(.contains, part, options: options) }
    /// Whether the string matches `pattern`: `?` is one character, `*` any run of them
    /// (`$0.name.like("R?x*")`).
    public func like(_ pattern: String, caseInsensitive: Bool = false) -> Query<Bool> {
        compared(.like, pattern, options: caseInsensitive ? .caseInsensitive : [])
    }
    /// Equality with options (`[c]`, `[d]`).
    public func equals(_ value: String, options: StringOptions = []) -> Query<Bool> { compared(.equal, value, options: options) }
    /// Inequality with options: `$0.name.notEquals("rex", options: .caseInsensitive)`.
    public func notEquals(_ value: String, options: StringOptions = []) -> Query<Bool> { compared(.notEqual, value, options: options) }
}

// MARK: Collections

/// A managed collection property in queries: `List`, `MutableSet`, `LinkingObjects` (an
/// implementation detail).
public protocol _QueryCollection {
    /// The element type, which `contains(_:)` and the aggregates of type-safe queries take.
    associatedtype QueryElement
}

extension List: _QueryCollection { public typealias QueryElement = Element }
extension MutableSet: _QueryCollection { public typealias QueryElement = Element }
extension LinkingObjects: _QueryCollection { public typealias QueryElement = Element }

extension Query where T: _QueryCollection {
    /// The number of elements: `$0.dogs.count == 0` for people without dogs.
    public var count: Query<Int> { aggregated(.count) }

    /// Whether the collection holds `element`: `$0.tags.contains("swift")`, or, for a
    /// collection of objects, a managed object (`$0.dogs.contains(rex)`).
    public func contains(_ element: T.QueryElement) -> Query<Bool> {
        let comparison = Comparison(left: .constant(.argument(arguments.count)), op: .in, right: expression, position: 0)
        return Query<Bool>(.predicate(.comparison(comparison)), arguments + [ValueConversion.unwrapped(element) as Any])
    }

    /// Whether the collection holds any of `elements`: `$0.tags.containsAny(in: ["swift", "go"])`.
    public func containsAny<S: Sequence>(in elements: S) -> Query<Bool> where S.Element == T.QueryElement {
        let path = KeyPathExpression(quantifier: .any, components: components, position: 0)
        let comparison = Comparison(left: .keyPath(path), op: .in, right: .constant(.argument(arguments.count)), position: 0)
        return Query<Bool>(.predicate(.comparison(comparison)), arguments + [Array(elements).map { ValueConversion.unwrapped($0) as Any }])
    }
}

extension Query where T: _QueryCollection, T.QueryElement: _QueryComparable {
    /// The sum of a collection of values: `$0.scores.sum >= 100` (0 when it is empty).
    public var sum: Query<T.QueryElement> { aggregated(.sum) }
    /// The average of a collection of values: `$0.scores.avg > 50` (nil when it is empty).
    public var avg: Query<T.QueryElement> { aggregated(.avg) }
    /// The smallest of a collection of values (nil when it is empty).
    public var min: Query<T.QueryElement> { aggregated(.min) }
    /// The largest of a collection of values (nil when it is empty).
    public var max: Query<T.QueryElement> { aggregated(.max) }
}

extension Query where T: _QueryComparable {
    /// The sum of a property over a collection's objects: `$0.items.price.sum > 100` (0 when there
    /// are none). On a key path without a list, set or linking objects, the aggregates trap.
    public var sum: Query<T> { aggregated(.sum) }
    /// The average of a property over a collection's objects: `$0.dogs.age.avg > 5` (nil when
    /// there are none).
    public var avg: Query<T> { aggregated(.avg) }
    /// The smallest value of a property over a collection's objects: `$0.dogs.age.min < 1`.
    public var min: Query<T> { aggregated(.min) }
    /// The largest value of a property over a collection's objects.
    public var max: Query<T> { aggregated(.max) }
}

// MARK: Results

extension Results {
    /// The objects for which `isIncluded` holds.
    ///
    /// ```swift
    /// let puppies = realm.objects(Dog.self).where { $0.age < 2 }
    /// ```
    public func `where`(_ isIncluded: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        let query = isIncluded(Query<Element>())
        do {
            let bound = try QueryBinder.bind(query.predicate, to: self.query.schema, arguments: query.arguments)
            return Results(realm: realm, query: self.query.adding(bound))
        } catch {
            misuse("Invalid type-safe query: \(error.reason)")
        }
    }
}

extension _QueryableObjects {
    /// The collection's objects for which `isIncluded` holds.
    public func `where`(_ isIncluded: (Query<QueriedObject>) -> Query<Bool>) -> Results<QueriedObject> {
        guard let results = _queryResults else { misuse("Only a managed collection can be queried: add its object to a realm first") }
        return results.where(isIncluded)
    }
}
