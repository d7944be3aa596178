import RealmStorage

// Queries on the collections of objects a managed object holds: `List`, `MutableSet` and
// `LinkingObjects`. Each gives `Results` over its objects, in its order, that follow the
// collection: a query on `person.dogs` sees dogs appended after it was made.

/// A managed collection of objects that can be queried (an implementation detail: `List`,
/// `MutableSet` and `LinkingObjects` of objects conform).
public protocol _QueryableObjects {
    associatedtype QueriedObject: Object
    /// The collection's objects as results, or nil while it is unmanaged.
    var _queryResults: Results<QueriedObject>? { get }
}

extension _QueryableObjects {
    private var results: Results<QueriedObject> {
        guard let results = _queryResults else {
            misuse("Only a managed collection can be queried: add its object to a realm first")
        }
        return results
    }

    /// The objects that match `predicateFormat` (see `Results.filter(_:_:)`).
    public func filter(_ predicateFormat: String, _ args: Any...) -> Results<QueriedObject> {
        do { return try results.filter(predicateFormat, arguments: args) } catch { misuse(error.message) }
    }

    /// The objects that match `predicateFormat`, or an `invalidQuery` error.
    ///
    /// - Throws: `Realm.Error` (`invalidQuery`).
    public func filter(_ predicateFormat: String, arguments: [Any]) throws(Realm.Error) -> Results<QueriedObject> {
        try results.filter(predicateFormat, arguments: arguments)
    }

    /// The collection's objects ordered by `keyPath` (see `Results.sorted(byKeyPath:ascending:)`).
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<QueriedObject> {
        results.sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The collection's objects ordered by several key paths.
    public func sorted<S: Sequence>(by keyPaths: S) -> Results<QueriedObject> where S.Element == SortDescriptor {
        results.sorted(by: keyPaths)
    }

    /// The first object of each distinct combination of values of `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<QueriedObject> where S.Element == String {
        results.distinct(by: keyPaths)
    }

    /// The smallest value of `property` among the objects (nil when there are none).
    public func min<T: _Persistable>(ofProperty property: String) -> T? { results.min(ofProperty: property) }
    /// The largest value of `property` among the objects (nil when there are none).
    public func max<T: _Persistable>(ofProperty property: String) -> T? { results.max(ofProperty: property) }
    /// The sum of `property` over the objects (0 when there are none).
    public func sum<T: _Persistable>(ofProperty property: String) -> T { results.sum(ofProperty: property) }
    /// The average of `property` over the objects (nil when there are none).
    public func average<T: _Persistable>(ofProperty property: String) -> T? { results.average(ofProperty: property) }

    /// The position of the first object matching `predicateFormat`, if any.
    public func index(matching predicateFormat: String, _ args: Any...) -> Int? {
        results.index(matching: predicateFormat, arguments: args)
    }
}

extension ListStorage where Element: Object {
    /// Results over the objects of the managed list or set, read anew at each run.
    var queryResults: Results<Element>? {
        guard let owner else { return nil }
        let property = self.property
        let schema: ObjectSchema
        do { schema = try ObjectSchema.of(Element.self) } catch { misuse("\(error)") }
        let query = ResultsQuery(schema: schema, source: .keys(owner: owner) { _ in
            owner.readList(property).compactMap { if case .link(let key) = $0 { key } else { nil } }
        })
        return Results(realm: owner.managedRealm, query: query)
    }
}

extension List: _QueryableObjects where Element: Object {
    public var _queryResults: Results<Element>? { storage.queryResults }
}

extension MutableSet: _QueryableObjects where Element: Object {
    public var _queryResults: Results<Element>? { storage.queryResults }
}

extension LinkingObjects: _QueryableObjects {
    public var _queryResults: Results<Element>? {
        guard let realm else { return nil }
        let schema: ObjectSchema
        do { schema = try ObjectSchema.of(Element.self) } catch { misuse("\(error)") }
        let linking = self
        let source = ResultsQuery.Source.keys(owner: owner) { _ in linking.currentKeys }
        return Results(realm: realm, query: ResultsQuery(schema: schema, source: source))
    }
}
