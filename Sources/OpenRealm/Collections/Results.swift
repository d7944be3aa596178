import RealmStorage

/// Objects of one type from a realm: all of them, or those a query selects, in the order its
/// sorts give (insertion order otherwise, which is not guaranteed).
///
/// Results are lazy and live: nothing runs until they are read, and every read reflects the
/// realm's current state (each commit after a refresh, and the realm's own changes inside a
/// write transaction). Enumerating with `for … in` visits the objects that matched when the
/// enumeration began.
///
/// ```swift
/// let puppies = realm.objects(Dog.self).filter("age < 2")
/// print(puppies.count)
/// for dog in puppies.sorted(byKeyPath: "name") { print(dog.name) }
/// ```
public struct Results<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    /// The realm the objects are read from (frozen for frozen results).
    public let realm: Realm
    let query: ResultsQuery

    init(realm: Realm, query: ResultsQuery) {
        self.realm = realm
        self.query = query
    }

    /// The keys of the objects at the realm's current state.
    var keys: [ObjectKey] {
        do { return try query.keys(in: realm) } catch { readFailure(error, path: realm.configuration.path, reading: "results of \(Element.className())", otherwise: "Reading results failed: \(error)") }
    }

    private var binding: TableBinding? {
        do { return try realm.binding(for: query.schema) } catch { misuse("\(error)") }
    }

    /// Always 0.
    public var startIndex: Int { 0 }
    /// The number of objects (`count`).
    public var endIndex: Int { count }
    /// The number of objects that match now; counted without reading them where an index or
    /// a column test can.
    public var count: Int {
        do { return try query.count(in: realm) } catch { readFailure(error, path: realm.configuration.path, reading: "results of \(Element.className())", otherwise: "Reading results failed: \(error)") }
    }
    /// Whether no object matches.
    public var isEmpty: Bool { count == 0 }

    /// The object at `position` (which must be below `count`).
    public subscript(position: Int) -> Element {
        guard let key = key(at: position) else { misuse("Index \(position) is out of bounds (must be less than \(count))") }
        return object(key)
    }

    /// The key at `position`, or nil past the end (one run of the query, no separate count).
    private func key(at position: Int) -> ObjectKey? {
        do { return try query.key(at: position, in: realm) } catch { readFailure(error, path: realm.configuration.path, reading: "results of \(Element.className())", otherwise: "Reading results failed: \(error)") }
    }

    private func object(_ key: ObjectKey) -> Element {
        guard let binding else { misuse("no table for \(Element.className())") }
        return realm.materialize(Element.self, binding, key)
    }

    /// The first object, if any; for sorted results, found without sorting the rest.
    public var first: Element? { key(at: 0).map(object) }
    /// The last object, if any.
    public var last: Element? { keys.last.map(object) }

    /// The objects that match now; later changes do not affect an enumeration under way.
    public struct Iterator: IteratorProtocol {
        let results: Results
        let keys: [ObjectKey]
        var position = 0

        /// The next object that still exists.
        public mutating func next() -> Element? {
            while position < keys.count {
                defer { position += 1 }
                // An object deleted during the enumeration is skipped.
                if let binding = results.binding, (try? results.realm.tableView(binding.table).contains(keys[position])) == true {
                    return results.object(keys[position])
                }
            }
            return nil
        }
    }

    /// An iterator over the objects that match now.
    public func makeIterator() -> Iterator { Iterator(results: self, keys: keys) }

    /// The class and the count: `Results<Dog> (3 objects)`.
    public var description: String { "Results<\(query.schema.className)> (\(count) objects)" }

    // MARK: Queries

    /// The objects that also match `predicateFormat` (NSPredicate syntax; `%@` stands for the
    /// next argument, `%K` for a key path given as an argument).
    ///
    /// ```swift
    /// let tanDogs = realm.objects(Dog.self).filter("color = 'tan' AND name BEGINSWITH %@", "B")
    /// ```
    ///
    /// A predicate that does not parse, names no property or compares with a value of the
    /// wrong type traps, as in Realm. To check predicates that come from users, call
    /// ``filter(_:arguments:)``, which throws instead.
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<Element> {
        do { return try filter(predicateFormat, arguments: args) } catch { misuse(error.message) }
    }

    /// The objects that also match `predicateFormat`, or a `Realm.Error` with code
    /// `invalidQuery` saying where and why the predicate is wrong.
    ///
    /// ```swift
    /// let matches = try people.filter(userInput, arguments: [])
    /// ```
    ///
    /// - Throws: `Realm.Error` (`invalidQuery`): the predicate does not parse, names a
    ///   property the class lacks, or compares values of types that do not compare.
    public func filter(_ predicateFormat: String, arguments: [Any]) throws(Realm.Error) -> Results<Element> {
        Results(realm: realm, query: query.adding(try Self.bind(predicateFormat, arguments, query.schema)))
    }

    static func bind(_ format: String, _ arguments: [Any], _ schema: ObjectSchema) throws(Realm.Error) -> BoundPredicate {
        do {
            let node = try PredicateParser.parse(format, arguments: arguments)
            return try QueryBinder.bind(node, to: schema, arguments: arguments)
        } catch {
            throw Realm.Error(invalidQuery: error, in: format)
        }
    }

    /// The objects ordered by the values of `keyPath` (through to-one links: `"owner.name"`).
    /// Only the last sort of a chain counts.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The objects ordered by several key paths: by the first, then the second among equals, …
    public func sorted<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == SortDescriptor {
        let order = keyPaths.map { descriptor in (path: toOnePath(descriptor.keyPath, "sort by"), ascending: descriptor.ascending) }
        return Results(realm: realm, query: query.adding(.sort(order)))
    }

    /// The first object of each distinct combination of values of `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        Results(realm: realm, query: query.adding(.distinct(keyPaths.map { toOnePath($0, "distinct by") })))
    }

    private func toOnePath(_ keyPath: String, _ use: String) -> BoundPath {
        let path: BoundPath
        do {
            path = try QueryBinder.path(keyPath, in: query.schema)
        } catch {
            misuse("Cannot \(use) '\(keyPath)': \(error.reason)")
        }
        ensure(!path.isToMany, "Cannot \(use) '\(keyPath)': it goes through a collection; sort and distinct need one value per object")
        ensure(path.last.linkTarget == nil, "Cannot \(use) '\(keyPath)': it is a link; name a property of the linked object")
        return path
    }

    // MARK: Aggregates

    /// The smallest value of `property` among the objects (nil when there are none).
    public func min<T: _Persistable>(ofProperty property: String) -> T? { aggregate(.min, property, as: T.self) }

    /// The largest value of `property` among the objects (nil when there are none).
    public func max<T: _Persistable>(ofProperty property: String) -> T? { aggregate(.max, property, as: T.self) }

    /// The sum of `property` over the objects (0 when there are none).
    public func sum<T: _Persistable>(ofProperty property: String) -> T { aggregate(.sum, property, as: T.self) ?? T._rlmGet(_StoredValue(.int(0))) }

    /// The average of `property` over the objects (nil when there are none).
    public func average<T: _Persistable>(ofProperty property: String) -> T? { aggregate(.avg, property, as: T.self) }

    private func aggregate<T: _Persistable>(_ aggregate: Aggregate, _ property: String, as type: T.Type) -> T? {
        let path = toOnePath(property, "compute \(aggregate.rawValue) of")
        let numeric: Set<ColumnType> = [.int, .float, .double, .decimal, .mixed]
        ensure(numeric.contains(path.type) || (path.type == .timestamp && (aggregate == .min || aggregate == .max)),
               "Cannot compute \(aggregate.rawValue) of '\(property)': it holds \(QueryBinder.typeName(path.type))")
        let result: Value
        do {
            let evaluator = QueryEvaluator(realm: realm)
            guard let binding = try evaluator.binding(query.schema) else { return nil }
            if query.readsWholeTable, path.steps.count == 1 {
                // A property of the objects themselves: read column by column.
                result = try evaluator.aggregate(aggregate, of: binding.columns[path.last.index], query.predicate, binding)
            } else {
                let table = try evaluator.view(binding)
                var values: [Value] = []
                for key in keys {
                    if let row = try table.row(key) { values += try evaluator.values(path, row, binding) }
                }
                result = QueryEvaluator.aggregate(aggregate, values)
            }
        } catch {
            readFailure(error, path: realm.configuration.path, reading: "results of \(Element.className())", otherwise: "Reading results failed: \(error)")
        }
        if result.isNull { return nil }
        return T._rlmGet(_StoredValue(ValueConversion.numeric(result, as: T._rlmKind.type)))
    }

    // MARK: Positions

    /// The position of `object` in the results, if it is one of them.
    public func index(of object: Element) -> Int? {
        guard let managed = object._managed, managed.realm === realm else { return nil }
        return keys.firstIndex(of: managed.key)
    }

    /// The position of the first object matching `predicateFormat`, if any.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        index(matching: predicateFormat, arguments: args)
    }

    func index(matching predicateFormat: String, arguments: [Any]) -> Int? {
        let matching: Set<ObjectKey>
        do { matching = Set(try filter(predicateFormat, arguments: arguments).keys) } catch { misuse(error.message) }
        return keys.firstIndex { matching.contains($0) }
    }
}

extension Realm.Error {
    /// An `invalidQuery` error for `format`, pointing at where it went wrong.
    init(invalidQuery error: QueryError, in format: String) {
        var message = "invalid predicate '\(format)'"
        if let position = error.position { message += " at offset \(position)" }
        self.init(.invalidQuery, message + ": " + error.reason)
    }
}
