import OpenRealm

/// A table of objects of one class, as the class page, a query and a collection of links show
/// them: a numbered first column linking to each object's page, then one column per property
/// (links as links to their objects, lists, sets and maps as their type and count, linking to
/// their page; strings cut to `cellLimit` characters).
enum ObjectTable {
    static let cellLimit = 80

    /// The rows of elements `from ..< from + count` of `objects`, numbered from `number`.
    ///
    /// Walks the sequence's iterator: `Results` reads its keys (and sorts) once for the
    /// iteration, where each subscript would run the query again.
    static func rows(_ objects: some Sequence<DynamicObject>, schema: ObjectSchema, from: Int, count: Int, numberedFrom number: Int) -> [HTML] {
        guard count > 0 else { return [] }
        var rows: [HTML] = []
        var iterator = objects.makeIterator()
        var position = 0
        while rows.count < count, let object = iterator.next() {
            defer { position += 1 }
            guard position >= from else { continue }
            rows.append(row(object, schema: schema, number: number + rows.count))
        }
        return rows
    }

    /// One object's row.
    static func row(_ object: DynamicObject, schema: ObjectSchema, number: Int) -> HTML {
        let cells: [HTML] = schema.properties.map { property in
            if Reading.isCollection(property) { return "<td>\(Reading.collectionHTML(of: object, property))</td>" }
            let value = object[property.name]
            let numeric = [.int, .double, .float, .decimal128].contains(property.type)
            return "<td\(numeric ? " class=\"num\"" as HTML : "")>\(Reading.html(value, limit: cellLimit))</td>"
        }
        return "<tr><td class=\"num\"><a class=\"open\" href=\"\(Link.object(ObjectAddress(of: object)))\">\(number)</a></td>\(cells)</tr>"
    }

    /// The table of `rows` with the headings of `schema`'s properties; `sortLink` gives the
    /// link a heading sorts by, if any.
    static func table(schema: ObjectSchema, rows: [HTML], sortLink: (PropertySchema) -> String? = { _ in nil }) -> HTML {
        let headings: [HTML] = schema.properties.map { property in
            let name: HTML = sortLink(property).map { "<a href=\"\($0)\">\(property.name)</a>" } ?? "\(property.name)"
            return "<th>\(name)<small>\(property.typeName)</small></th>"
        }
        let body: HTML = rows.isEmpty ? "<tr><td class=\"muted\" colspan=\"\(schema.properties.count + 1)\">no objects</td></tr>" : "\(rows)"
        return """
            <table id="objects"><thead><tr><th>#</th>\(headings)</tr></thead>
            <tbody>\(body)</tbody></table>
            """
    }
}
