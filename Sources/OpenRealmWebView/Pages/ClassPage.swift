import DynamicReading
import OpenRealm

/// `/class/<Class>`: a page of the class's objects, one row each, a column per property, and
/// the query box: a predicate (`age > 3 AND name BEGINSWITH 'A'`), a sort and a limit, sent
/// as a GET form so that a query is a URL like any page.
///
/// Every parameter is checked before it reaches the library, which traps on some misuse (a
/// sort key path that is no property): an unknown class is a 404, a predicate that does not
/// parse or bind a 400 showing where it went wrong, a sort that names no sortable property, a
/// limit outside 1…`maximumLimit` or a page past the end a 400.
enum ClassPage {
    static let pageSize = 50
    static let maximumLimit = 10_000

    /// What the request asks for.
    struct Request: Sendable {
        var className: String
        var predicate = ""
        var sort = ""
        var descending = false
        var limit = ""
        var page = ""

        init(className: String, parameters: [String: String]) {
            self.className = className
            predicate = parameters["q"] ?? ""
            sort = parameters["sort"] ?? ""
            descending = parameters["order"] == "desc"
            limit = parameters["limit"] ?? ""
            page = parameters["page"] ?? ""
        }

        /// The query's parameters, for links to other pages of it.
        var parameters: [(String, String)] {
            [("q", predicate), ("sort", sort), ("order", descending ? "desc" : ""), ("limit", limit)]
        }
    }

    static func render(_ realm: Realm, _ request: Request, site: Site) throws(PageError) -> Page {
        let schema = try Reading.objectSchema(request.className, in: realm)
        let form = queryForm(schema, request)
        var results: Results<DynamicObject>
        do {
            results = try realm.dynamicObjects(schema.className)
        } catch {
            throw PageError(.notFound, "No such class", error.message)
        }
        let predicate = request.predicate.trimmingCharacters(in: .whitespaces)
        if !predicate.isEmpty {
            do {
                results = try results.filter(predicate, arguments: [])
            } catch {
                throw PageError(.badRequest, "Bad query", error.message, detail: """
                    \(QueryErrorView.html(predicate: predicate, message: error.message))
                    \(heading(schema))
                    \(form)
                    """)
            }
        }
        if !request.sort.isEmpty {
            try checkSort(request.sort, of: schema, in: realm, form: form)
            results = results.sorted(byKeyPath: request.sort, ascending: !request.descending)
        }
        let limit = try parseLimit(request.limit, form: form)
        let total = results.count
        let shown = min(total, limit ?? total)
        let pageCount = max(1, (shown + pageSize - 1) / pageSize)
        let page = try parsePage(request.page, pageCount: pageCount)
        let offset = (page - 1) * pageSize
        let rows = ObjectTable.rows(results, schema: schema, from: offset, count: min(pageSize, shown - offset), numberedFrom: offset + 1)

        let what = predicate.isEmpty ? "\(total) object\(total == 1 ? "" : "s")"
                                     : "\(total) object\(total == 1 ? "" : "s") match\(total == 1 ? "es" : "")"
        let limited = shown < total ? " of the first \(shown)" : ""
        let range: HTML = shown == 0 ? "" : " · showing \(offset + 1)–\(offset + rows.count)\(limited)"
        let body: HTML = """
            \(heading(schema))
            \(form)
            <p class="summary" id="summary">\(what)\(range)</p>
            \(ObjectTable.table(schema: schema, rows: rows, sortLink: { property in sortLink(property, request) }))
            \(pager(request, page: page, pageCount: pageCount))
            """
        return Layout.page(title: schema.className, fileName: site.fileName, body: body)
    }

    private static func heading(_ schema: ObjectSchema) -> HTML {
        let key: HTML = schema.primaryKeyProperty.map { " · primary key \($0.name)" } ?? " · no primary key"
        return "<h1>\(schema.className)</h1><p class=\"muted\">\(schema.properties.count) properties\(key)</p>"
    }

    // MARK: The query box

    /// The properties a query can sort by: those holding one value that is not a link.
    static func sortable(_ schema: ObjectSchema) -> [PropertySchema] {
        SortKeyPath.sortable(schema)
    }

    private static func queryForm(_ schema: ObjectSchema, _ request: Request) -> HTML {
        let sortOptions: [HTML] = sortable(schema).map { property in
            "<option value=\"\(property.name)\"\(selected(request.sort == property.name))>\(property.name)</option>"
        }
        // A sort through a link (`owner.name`) typed into the URL is kept as an option.
        let typed: HTML = request.sort.isEmpty || sortable(schema).contains(where: { $0.name == request.sort }) ? ""
            : "<option value=\"\(request.sort)\" selected>\(request.sort)</option>"
        return """
            <form class="query" id="query" method="get" action="\(Link.classTable(schema.className))">
            <input type="text" name="q" value="\(request.predicate)" placeholder="age &gt; 3 AND name BEGINSWITH 'A'" aria-label="predicate">
            <label>sort <select name="sort"><option value="">(none)</option>\(sortOptions)\(typed)</select></label>
            <select name="order" aria-label="order"><option value="asc">ascending</option><option value="desc"\(selected(request.descending))>descending</option></select>
            <label>limit <input type="number" name="limit" min="1" max="\(maximumLimit)" value="\(request.limit)" size="6"></label>
            <button type="submit">Run</button> <a href="\(Link.classTable(schema.className))">clear</a>
            </form>
            """
    }

    private static func selected(_ isSelected: Bool) -> HTML {
        isSelected ? " selected" : ""
    }

    /// A column heading's link: sorts by the property, the other way round when it sorts by it already.
    private static func sortLink(_ property: PropertySchema, _ request: Request) -> String? {
        guard !Reading.isCollection(property), property.objectClassName == nil else { return nil }
        var parameters = request
        parameters.descending = request.sort == property.name && !request.descending
        parameters.sort = property.name
        return Link.classTable(request.className, parameters.parameters)
    }

    /// Refuses a sort key path the library would trap on (SortKeyPath).
    private static func checkSort(_ path: String, of schema: ObjectSchema, in realm: Realm, form: HTML) throws(PageError) {
        if let problem = SortKeyPath.problem(path, of: schema, in: realm.schema) {
            throw PageError(.badRequest, "Bad sort", problem, detail: form)
        }
    }

    private static func parseLimit(_ text: String, form: HTML) throws(PageError) -> Int? {
        guard !text.isEmpty else { return nil }
        guard let limit = Int(text), (1...maximumLimit).contains(limit) else {
            throw PageError(.badRequest, "Bad limit", "The limit must be a whole number from 1 to \(maximumLimit); '\(text)' is not.", detail: form)
        }
        return limit
    }

    /// The page number `text` asks for (1 when empty).
    static func parsePage(_ text: String, pageCount: Int) throws(PageError) -> Int {
        guard !text.isEmpty else { return 1 }
        guard let page = Int(text), page >= 1 else {
            throw PageError(.badRequest, "Bad page number", "The page number must be a whole number from 1; '\(text)' is not.")
        }
        guard page <= pageCount else {
            throw PageError(.notFound, "No such page", "Page \(page) is past the end: there \(pageCount == 1 ? "is 1 page" : "are \(pageCount) pages").")
        }
        return page
    }

    private static func pager(_ request: Request, page: Int, pageCount: Int) -> HTML {
        guard pageCount > 1 else { return "" }
        func link(_ target: Int, _ label: String) -> HTML {
            "<a href=\"\(Link.classTable(request.className, request.parameters + [("page", String(target))]))\">\(label)</a>"
        }
        let previous: HTML = page > 1 ? link(page - 1, "← previous") : ""
        let next: HTML = page < pageCount ? link(page + 1, "next →") : ""
        return "<p class=\"pager\">\(previous)<span>page \(page) of \(pageCount)</span>\(next)</p>"
    }
}
