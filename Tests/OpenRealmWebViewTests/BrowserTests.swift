import Foundation
import OpenRealm
import Testing
import TestSupport
@testable import OpenRealmWebView

/// The web view in a real browser: Debian's chromium, headless, loading pages from the web view
/// listening on 127.0.0.1 in this process, and the test checking what the page shows once the
/// browser has parsed it and run its script: the classes, a class's table, a query sent through
/// the query box's form with its rows, a bad query with its error at its position, the info
/// page, a collection, and an object's history growing while the test commits.
///
/// chromium missing fails these tests with what to run (scripts/install-prerequisites.sh); they
/// never skip. Each page is also photographed (1280×900); with OPENREALM_WEBVIEW_SCREENSHOTS
/// set to a folder, the pictures are copied there (docs/webview/ holds the ones docs/WebView.md
/// shows).
///
/// Serialized: a browser is a few processes and a few hundred megabytes, and the machine has
/// two cores. `.childProcesses`: the browser is waited for on threads of its own.
@Suite(.serialized, .childProcesses) struct BrowserTests {
    /// Keeps `png` where OPENREALM_WEBVIEW_SCREENSHOTS says, if it says.
    static func keep(_ png: URL) throws {
        #expect(((try? FileManager.default.attributesOfItem(atPath: png.path)[.size]) as? Int ?? 0) > 1_000, "\(png.lastPathComponent) is empty")
        guard let folder = ProcessInfo.processInfo.environment["OPENREALM_WEBVIEW_SCREENSHOTS"], !folder.isEmpty else { return }
        let target = URL(fileURLWithPath: folder).appendingPathComponent(png.lastPathComponent)
        try? FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: png, to: target)
    }

    /// The document of `path` once chromium has loaded it (`--dump-dom`), and its picture
    /// (`--screenshot`), kept as `picture`.
    static func load(_ path: String, port: Int, picture: String, in folder: WebFolder) throws -> String {
        let url = "http://127.0.0.1:\(port)" + path
        let document = try Chromium.dumpDOM(url, in: folder.url)
        let png = folder.url.appendingPathComponent(picture)
        try Chromium.screenshot(url, to: png, in: folder.url)
        try keep(png)
        return document
    }

    @Test func chromiumIsInstalled() throws {
        _ = try Chromium.executable()
    }

    @Test func theClassesAndInfoPagesShowInTheBrowser() async throws {
        _ = try Chromium.executable()
        let folder = WebFolder()
        try Fixture.write(in: folder)
        try await Fixture.view(of: folder).whileListening { port in
            let classes = try Self.load("/", port: port, picture: "classes.png", in: folder)
            #expect(classes.contains("<title>Classes · people.realm</title>"))
            #expect(classes.contains("<a href=\"/class/WebPerson\">WebPerson</a></td><td class=\"num\">5</td>"), "\(classes)")
            #expect(classes.contains("<a href=\"/class/WebDog\">WebDog</a></td><td class=\"num\">60</td>"))

            let info = try Self.load("/info", port: port, picture: "info.png", in: folder)
            #expect(info.contains("<dd data-field=\"format version\">4 (realm file)</dd>"), "\(info)")
            #expect(info.contains("<dd data-field=\"encryption\">none</dd>"))
        }
    }

    @Test func aClassTableAndACollectionShowInTheBrowserWithMarkupAsText() async throws {
        _ = try Chromium.executable()
        let folder = WebFolder()
        try Fixture.write(in: folder)
        try await Fixture.view(of: folder).whileListening { port in
            let table = try Self.load("/class/WebPerson", port: port, picture: "class.png", in: folder)
            #expect(table.contains("5 objects · showing 1–5"), "\(table)")
            #expect(table.contains("<td>Ada</td>"))
            #expect(table.contains("<a class=\"link\" href=\"/object/WebDog?key=0\">WebDog #0</a>"))
            // The name holding a script is text in the document the browser built: no script
            // element came of it (the page's own script is on object pages only).
            #expect(table.contains("&lt;script&gt;alert('x')&lt;/script&gt;"))
            #expect(!table.contains("<script>alert"))

            let dogs = try Self.load("/object/WebPerson/property/dogs?pk=1", port: port, picture: "collection.png", in: folder)
            #expect(dogs.contains("List&lt;WebDog&gt; · 2 elements"), "\(dogs)")
            #expect(dogs.contains("<td>Fido</td>"))
        }
    }

    @Test func aQueryRunsThroughTheQueryBoxAndABadOneShowsWhereItIsWrong() async throws {
        _ = try Chromium.executable()
        let folder = WebFolder()
        try Fixture.write(in: folder)
        try await Fixture.view(of: folder).whileListening { port in
            let base = "http://127.0.0.1:\(port)"
            let browser = try BrowserSession(in: folder.url)
            try browser.navigate(base + "/class/WebPerson")
            // Typed into the form and sent, as a person would: the browser makes the URL.
            _ = try browser.evaluate("""
                (function () {
                  var form = document.getElementById('query');
                  form.elements.q.value = "age > 3 AND name BEGINSWITH 'A'";
                  form.elements.sort.value = 'age';
                  form.elements.order.value = 'desc';
                  form.elements.limit.value = '10';
                  form.requestSubmit();
                  return true;
                })()
                """)
            try browser.waitUntil("location.search.indexOf('q=') >= 0 && document.readyState === 'complete' && document.getElementById('summary') !== null")
            let location = try #require(try browser.evaluate("location.pathname + location.search") as? String)
            #expect(location == "/class/WebPerson?q=age+%3E+3+AND+name+BEGINSWITH+%27A%27&sort=age&order=desc&limit=10")
            #expect(try browser.evaluate("document.getElementById('summary').textContent") as? String == "3 objects match · showing 1–3")
            let names = try browser.evaluate("Array.from(document.querySelectorAll('#objects tbody tr')).map(function (row) { return row.cells[2].textContent; })")
            #expect(names as? [String] == ["Alan", "Ada", "Al"])
            let queryPNG = folder.url.appendingPathComponent("query.png")
            try browser.screenshot(to: queryPNG)
            try Self.keep(queryPNG)

            // A predicate naming a property the class lacks.
            _ = try browser.evaluate("""
                (function () {
                  var form = document.getElementById('query');
                  form.elements.q.value = "name == 'Ada' AND colour == 3";
                  form.requestSubmit();
                  return true;
                })()
                """)
            try browser.waitUntil("location.search.indexOf('colour') >= 0 && document.readyState === 'complete' && document.getElementById('error') !== null")
            #expect(try browser.evaluate("document.getElementById('error').textContent") as? String
                    == "invalid predicate 'name == 'Ada' AND colour == 3' at offset 18: class WebPerson has no property 'colour'")
            #expect(try browser.evaluate("document.getElementById('error-position').textContent") as? String == "c")
            #expect(try browser.evaluate("document.getElementById('predicate').textContent") as? String == "name == 'Ada' AND colour == 3")
            #expect(try browser.evaluate("document.getElementById('offset').textContent") as? String == "at offset 18 (character 19)")
            #expect(try browser.evaluate("document.getElementById('objects') === null") as? Bool == true)
            #expect(try browser.evaluate("document.title") as? String == "Bad query · people.realm")
            let errorPNG = folder.url.appendingPathComponent("query-error.png")
            try browser.screenshot(to: errorPNG)
            try Self.keep(errorPNG)
        }
    }

    @Test func anObjectPageShowsItsChangesAsTheyAreCommitted() async throws {
        _ = try Chromium.executable()
        let folder = WebFolder()
        // Opened before the web view's read-only realm: one store per file per process.
        let writer = try Realm(configuration: Fixture.write(in: folder))
        try await Fixture.view(of: folder).whileListening { port in
            let browser = try BrowserSession(in: folder.url)
            try browser.navigate("http://127.0.0.1:\(port)/object/WebPerson?pk=1")
            #expect(try browser.evaluate("document.querySelector('td[data-property=name]').textContent") as? String == "Ada")
            // The page's script has the stream open once the server said it follows the object.
            try browser.waitUntil("document.body.dataset.stream === 'open'")
            try HistoryStreamTests.commit(in: folder) { realm in
                try realm.write {
                    let ada = realm.object(ofType: WebPerson.self, forPrimaryKey: 1)!
                    ada.name = "Ada <b>II</b>"
                    ada.age = 37
                }
            }
            try browser.waitUntil("document.querySelectorAll('#history li').length >= 1")
            let entry = try #require(try browser.evaluate("document.querySelector('#history li').textContent") as? String)
            #expect(entry.hasSuffix(" name = Ada <b>II</b>; age = 37"), "\(entry)")
            // The values on the page follow, as text.
            #expect(try browser.evaluate("document.querySelector('td[data-property=name]').textContent") as? String == "Ada <b>II</b>")
            #expect(try browser.evaluate("document.querySelectorAll('#history b').length") as? Int == 0)

            try HistoryStreamTests.commit(in: folder) { realm in
                try realm.write { realm.object(ofType: WebPerson.self, forPrimaryKey: 1)!.tags.insert("chess") }
            }
            try browser.waitUntil("document.querySelectorAll('#history li').length >= 2")
            let second = try #require(try browser.evaluate("document.querySelectorAll('#history li')[1].textContent") as? String)
            #expect(second.contains("tags = 3 elements: "), "\(second)")
            let document = try browser.document()
            #expect(document.contains("<ol id=\"history\" data-events=\"/object/WebPerson/events?pk=1\"><li>"))
            let objectPNG = folder.url.appendingPathComponent("object.png")
            try browser.screenshot(to: objectPNG)
            try Self.keep(objectPNG)
        }
        withExtendedLifetime(writer) {}
    }
}
