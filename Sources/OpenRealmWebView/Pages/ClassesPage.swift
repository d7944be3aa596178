import OpenRealm

/// `/`: the file's classes with their object counts, property counts and primary keys.
enum ClassesPage {
    static func render(_ realm: Realm, site: Site) throws(PageError) -> Page {
        let classes = realm.schema.objectSchema.sorted { $0.className < $1.className }
        var rows: [HTML] = []
        for schema in classes {
            let count = try Self.count(schema.className, in: realm)
            let primaryKey: HTML = schema.primaryKeyProperty.map { "\($0.name)" } ?? "<span class=\"null\">none</span>"
            rows.append("""
                <tr><td><a href="\(Link.classTable(schema.className))">\(schema.className)</a></td>\
                <td class="num">\(count)</td><td class="num">\(schema.properties.count)</td><td>\(primaryKey)</td></tr>
                """)
        }
        let table: HTML = classes.isEmpty ? "<p class=\"muted\">The file has no classes.</p>" : """
            <table id="classes"><thead><tr><th>Class</th><th>Objects</th><th>Properties</th><th>Primary key</th></tr></thead>
            <tbody>\(rows)</tbody></table>
            """
        return Layout.page(title: "Classes", fileName: site.fileName, body: """
            <h1>Classes</h1>
            \(table)
            """)
    }

    /// The number of objects of class `className`.
    static func count(_ className: String, in realm: Realm) throws(PageError) -> Int {
        do {
            return try realm.dynamicObjects(className).count
        } catch {
            throw PageError(.notFound, "No such class", error.message)
        }
    }
}

/// What every page needs to know of the web view: the file's name, for the header.
struct Site: Sendable {
    var fileName: String
}
