// The syntax tree of a predicate, as the parser (PredicateParser.swift) and the type-safe
// query builder produce it, before its key paths are resolved against a class
// (QueryBinder.swift). Positions are UTF-8 offsets into the predicate string, so that binding
// errors can point at the part of the string they are about.

/// A parsed predicate.
indirect enum PredicateNode: Equatable {
    /// TRUEPREDICATE (true) or FALSEPREDICATE (false).
    case constant(Bool)
    case and(PredicateNode, PredicateNode)
    case or(PredicateNode, PredicateNode)
    case not(PredicateNode)
    case comparison(Comparison)
}

/// `left op right`, e.g. `age < 2`, `name BEGINSWITH[c] %@`, `age BETWEEN {1, 5}`,
/// `name IN {'a', 'b'}`. Either side may be the key path; at least one side must be one.
struct Comparison: Equatable {
    var left: QueryExpression
    var op: ComparisonOperator
    var right: QueryExpression
    var options: StringOptions = []
    /// Where the comparison starts in the predicate string.
    var position: Int
}

enum ComparisonOperator: String, Equatable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    /// Right side: a list `{a, b}` or an argument holding a collection.
    case `in` = "IN"
    /// Right side: a list of two, `{low, high}`, or an argument holding two values.
    case between = "BETWEEN"
}

/// How strings compare in a query: the `[c]`, `[d]` and `[cd]` modifiers of predicate
/// strings, and the `options:` of type-safe string queries.
///
/// ```swift
/// let rexes = dogs.where { $0.name.equals("rex", options: [.caseInsensitive, .diacriticInsensitive]) }
/// let same = dogs.filter("name ==[cd] %@", "rex")
/// ```
public struct StringOptions: OptionSet, Equatable, Hashable, Sendable {
    /// The options as bits.
    public let rawValue: UInt8
    /// The options whose bits are `rawValue`.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `[c]`: letters compare without case.
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `[d]`: letters compare without diacritics ("é" == "e").
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

/// One side of a comparison.
indirect enum QueryExpression: Equatable {
    case keyPath(KeyPathExpression)
    case constant(QueryConstant)
    /// `{a, b, c}`: the right side of IN and BETWEEN.
    case list([QueryExpression], position: Int)
    /// `SUBQUERY(collection, $x, predicate).@count`: how many elements of `collection`
    /// match `predicate`, in which key paths starting with `variable` name the element.
    case subqueryCount(collection: KeyPathExpression, variable: String, predicate: PredicateNode, position: Int)
}

/// A key path, with what may surround it: `ANY dogs.age`, `employees.@count`,
/// `items.@sum.price`, `scores.@avg`, `$x.age` (inside a subquery).
struct KeyPathExpression: Equatable {
    /// ANY/SOME, ALL or NONE before the path; nil when none was written.
    var quantifier: Quantifier?
    /// The property names, in order (`["dogs", "age"]`); inside a subquery the first
    /// component may be the subquery's variable (`"$x"`).
    var components: [String]
    /// `@count`, `@sum`, … after `components`.
    var aggregate: Aggregate?
    /// The property of each element an aggregate applies to (`price` in `items.@sum.price`).
    var aggregateProperty: [String] = []
    /// Where the key path starts in the predicate string.
    var position: Int
}

enum Quantifier: String, Equatable {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

enum Aggregate: String, Equatable, CaseIterable {
    case count = "@count"
    case sum = "@sum"
    case avg = "@avg"
    case min = "@min"
    case max = "@max"
}

/// A constant written in the predicate, or a `%@` argument.
enum QueryConstant: Equatable {
    /// `nil` or `NULL`.
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    /// `%@`: the argument at this position of the argument list.
    case argument(Int)
}

/// Why a predicate cannot be used: where (a UTF-8 offset into the predicate string, or nil
/// when the problem is not in the string) and what.
struct QueryError: Error, Equatable {
    var position: Int?
    var reason: String
}
