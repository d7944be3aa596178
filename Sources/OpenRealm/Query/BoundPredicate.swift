import RealmStorage

// A predicate resolved against a model class (QueryBinder.swift makes it): every key path is
// a chain of properties, every constant an engine value of the type it is compared with, and
// every operator one the types allow. Resolution is against the schema only, so a predicate is
// checked when the query is built, even before the realm has a table for the class; the
// evaluator (QueryEvaluator.swift) maps properties to columns when it runs.

/// A resolved predicate.
indirect enum BoundPredicate {
    case constant(Bool)
    case and([BoundPredicate])
    case or([BoundPredicate])
    case not(BoundPredicate)
    case compare(BoundComparison)
}

/// A chain of properties from a class: `dog.owner.name` is three steps. Every step but the
/// last is a link, a list of links or linking objects.
struct BoundPath {
    /// The properties, each of the class the step before links to (the first of the base class).
    var steps: [PropertySchema]
    /// The class owning each step.
    var owners: [ObjectSchema]

    var last: PropertySchema { steps[steps.count - 1] }
    /// The class the path ends in, when its last step is a link (else nil).
    var target: ObjectSchema? { try? last.targetSchema() }
    /// Whether the path can reach several values (it goes through a list, set, map or
    /// linking objects).
    var isToMany: Bool { steps.contains { $0.isList || $0.isComputed } }
    /// The type of the values the path reaches.
    var type: ColumnType { last.columnType }
    var name: String { steps.map(\.name).joined(separator: ".") }
}

/// One side of a resolved comparison.
enum BoundOperand {
    /// A constant (nil compares as `.null`).
    case value(Value)
    /// The values of an IN list or a BETWEEN pair.
    case values([Value])
    /// The values a key path reaches from the object.
    case path(BoundPath)
    /// An aggregate over the collection `path` reaches: its element count, or the sum,
    /// average, minimum or maximum of its values (of `property` of each element, for a
    /// collection of objects).
    case aggregate(BoundPath, Aggregate, property: BoundPath?)
    /// How many elements of the collection `path` reaches match `predicate` (resolved
    /// against the element class).
    case subqueryCount(BoundPath, BoundPredicate)
}

/// `left op right`, with the key path on the left: a comparison written with the constant
/// first is turned around (`5 < age` becomes `age > 5`).
struct BoundComparison {
    var left: BoundOperand
    var op: ComparisonOperator
    var right: BoundOperand
    var options: StringOptions
    /// For a left side reaching several values: ANY (the default), ALL or NONE of them.
    var quantifier: Quantifier
}
