import DynamicReading
import OpenRealm

/// `/object/<Class>/property/<name>?pk=…&page=`: a list, set or map of an object, a page at a
/// time. Elements that are objects are shown as the class page shows them (a column per
/// property); other elements as their values, with their positions or, in a map, their keys.
enum CollectionPage {
    static func render(_ realm: Realm, _ address: ObjectAddress, property name: String, page pageText: String, site: Site) throws(PageError) -> Page {
        let object = try address.resolve(in: realm)
        let schema = object.objectSchema
        let canonical = ObjectAddress(of: object)
        guard let property = schema[name] else {
            throw PageError(.notFound, "No such property", "Class \(schema.className) has no property '\(name)'.")
        }
        guard Reading.isCollection(property) else {
            throw PageError(.badRequest, "Not a collection", "\(schema.className).\(name) is a \(property.typeName), not a list, set or map.")
        }
        let collection = object[property.name]
        let count = DynamicValue.count(collection)
        let pageSize = ClassPage.pageSize
        let pageCount = max(1, (count + pageSize - 1) / pageSize)
        let page = try ClassPage.parsePage(pageText, pageCount: pageCount)
        let offset = (page - 1) * pageSize
        let elements = DynamicValue.elements(collection, from: offset, count: pageSize)

        let table: HTML
        if let target = property.objectClassName, let targetSchema = realm.schema[target], !property.isMap {
            let objects = elements.compactMap { $0.value as? DynamicObject }
            table = ObjectTable.table(schema: targetSchema, rows: ObjectTable.rows(objects, schema: targetSchema, from: 0, count: objects.count,
                                                                                    numberedFrom: offset + 1))
        } else {
            let rows: [HTML] = elements.enumerated().map { position, element in
                let key: HTML = element.key.map { "\($0)" } ?? "\(offset + position + 1)"
                return "<tr><td class=\"num\">\(key)</td><td>\(Reading.html(element.value))</td></tr>"
            }
            let body: HTML = rows.isEmpty ? "<tr><td class=\"muted\" colspan=\"2\">empty</td></tr>" : "\(rows)"
            table = "<table id=\"objects\"><thead><tr><th>\(property.isMap ? "key" : "#")</th><th>value</th></tr></thead><tbody>\(body)</tbody></table>"
        }
        func link(_ target: Int, _ label: String) -> HTML {
            "<a href=\"\(Link.collection(canonical, property.name, page: target))\">\(label)</a>"
        }
        let pager: HTML = pageCount == 1 ? "" : """
            <p class="pager">\(page > 1 ? link(page - 1, "← previous") : "")<span>page \(page) of \(pageCount)</span>\(page < pageCount ? link(page + 1, "next →") : "")</p>
            """
        let body: HTML = """
            <h1><a href="\(Link.object(canonical))">\(canonical.label)</a> · \(property.name)</h1>
            <p class="muted" id="summary">\(property.typeName) · \(count) element\(count == 1 ? "" : "s")</p>
            \(table)
            \(pager)
            """
        return Layout.page(title: "\(canonical.label) · \(property.name)", fileName: site.fileName, body: body)
    }
}
