import DynamicReading
import OpenRealm

/// `/object/<Class>?pk=…` (or `?key=…`): one object, a row per property, and its history:
/// the changes committed while the page is open, appended as they arrive from the object's
/// event stream (`HistoryStream`).
///
/// The page's only script is inline and reads the stream's URL from a data attribute; it
/// writes what arrives with `textContent`, so a value holding markup stays text. It marks the
/// document `data-stream="open"` once the server has said the stream is ready (what a test
/// waits for before it commits) and appends one list item per change:
/// `HH:MM:SS name = value; other = value`.
enum ObjectPage {
    /// Collection elements shown on the object's page; the rest are on the collection's page.
    static let inlineElements = 10

    static func render(_ realm: Realm, _ address: ObjectAddress, site: Site) throws(PageError) -> Page {
        let object = try address.resolve(in: realm)
        let schema = object.objectSchema
        let canonical = ObjectAddress(of: object)
        let rows: [HTML] = schema.properties.map { property in
            var traits: [String] = []
            if property.isPrimaryKey { traits.append("primary key") } else if property.isIndexed { traits.append("indexed") }
            let type: HTML = "\(property.typeName)\(traits.isEmpty ? "" : " · " + traits.joined(separator: ", "))"
            return "<tr><th>\(property.name)</th><td class=\"muted\">\(type)</td><td data-property=\"\(property.name)\">\(value(object, property, canonical))</td></tr>"
        }
        let body: HTML = """
            <h1>\(canonical.label)</h1>
            <p class="muted">class <a href="\(Link.classTable(schema.className))">\(schema.className)</a> · object key \(object.objectKeyValue)</p>
            <table id="object"><thead><tr><th>Property</th><th>Type</th><th>Value</th></tr></thead><tbody>\(rows)</tbody></table>
            <h2>History</h2>
            <p class="muted" id="stream">Changes committed while this page is open appear here.</p>
            <ol id="history" data-events="\(Link.events(canonical))"></ol>
            <script>\(script)</script>
            """
        return Layout.page(title: canonical.label, fileName: site.fileName, body: body)
    }

    /// A property's value: a collection as its count, its first elements and a link to the rest.
    private static func value(_ object: DynamicObject, _ property: PropertySchema, _ address: ObjectAddress) -> HTML {
        guard Reading.isCollection(property) else { return Reading.html(object[property.name]) }
        let collection = object[property.name]
        let count = DynamicValue.count(collection)
        let items: [HTML] = DynamicValue.elements(collection, from: 0, count: inlineElements).map { element in
            let key: HTML = element.key.map { "<span class=\"muted\">\($0):</span> " } ?? ""
            return "<li>\(key)\(Reading.html(element.value, limit: ObjectTable.cellLimit))</li>"
        }
        let list: HTML = items.isEmpty ? "" : "<ul>\(items)</ul>"
        return """
            <a class="collection" href="\(Link.collection(address, property.name))">\(count) element\(count == 1 ? "" : "s")\(count > inlineElements ? " (all)" : "")</a>\(list)
            """
    }

    // The inline script: template text, inserted as markup. It reads nothing from the page but
    // the stream's URL and writes only text.
    private static let script: HTML = """

        (function () {
          var list = document.getElementById('history');
          var status = document.getElementById('stream');
          var source = new EventSource(list.dataset.events);
          function two(n) { return (n < 10 ? '0' : '') + n; }
          function now() { var d = new Date(); return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds()); }
          function append(text) { var item = document.createElement('li'); item.textContent = now() + ' ' + text; list.appendChild(item); }
          source.addEventListener('ready', function (event) {
            var ready = JSON.parse(event.data);
            status.textContent = 'Watching for changes since version ' + ready.version + '.';
            document.body.dataset.stream = 'open';
          });
          source.addEventListener('change', function (event) {
            var change = JSON.parse(event.data);
            append(change.changes.map(function (c) { return c.property + ' = ' + c.value; }).join('; '));
            change.changes.forEach(function (c) {
              document.querySelectorAll('td[data-property]').forEach(function (cell) {
                if (cell.dataset.property === c.property) { cell.textContent = c.value; cell.className = 'changed'; }
              });
            });
          });
          source.addEventListener('deleted', function () {
            append('the object was deleted');
            status.textContent = 'The object was deleted.';
            source.close();
          });
          source.addEventListener('end', function () { source.close(); });
          source.onerror = function () {
            if (source.readyState === EventSource.CLOSED) { status.textContent = 'The stream has ended.'; }
          };
        })();

        """
}
