import Foundation
import OpenRealm
import Testing
@testable import OpenRealmWebView

/// Every page through the router (HummingbirdTesting's `.router` framework), its bad inputs
/// and the escaping of what the file holds.
@Suite struct RouteTests {
    @Test func theClassesPageListsEveryClassWithItsCount() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let page = try await Fixture.view(of: folder).fetch("/")
        #expect(page.status == 200)
        #expect(page.headers[.contentType] == "text/html; charset=utf-8")
        #expect(page.body.contains("<a href=\"/class/WebPerson\">WebPerson</a></td><td class=\"num\">5</td>"))
        #expect(page.body.contains("<a href=\"/class/WebDog\">WebDog</a></td><td class=\"num\">60</td>"))
        #expect(page.body.contains("<a href=\"/class/WebNote\">WebNote</a></td><td class=\"num\">1</td>"))
        #expect(page.body.contains("<span class=\"null\">none</span>"))   // WebDog has no primary key
        #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
    }

    @Test func aClassPageShowsItsObjectsWithLinksAndCollections() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let page = try await Fixture.view(of: folder).fetch("/class/WebPerson")
        #expect(page.status == 200)
        #expect(page.body.contains("<p class=\"summary\" id=\"summary\">5 objects · showing 1–5</p>"))
        #expect(page.body.contains("<a class=\"open\" href=\"/object/WebPerson?pk=1\">1</a>"))
        // A link to an object without a primary key goes by its key; collections by their counts.
        #expect(page.body.contains("<a class=\"link\" href=\"/object/WebDog?key=0\">WebDog #0</a>"))
        #expect(page.body.contains("<a class=\"collection\" href=\"/object/WebPerson/property/dogs?pk=1\">List&lt;WebDog&gt; · 2</a>"))
        #expect(page.body.contains("<a class=\"collection\" href=\"/object/WebPerson/property/tags?pk=1\">MutableSet&lt;String&gt; · 2</a>"))
        #expect(page.body.contains("<a class=\"collection\" href=\"/object/WebPerson/property/scores?pk=1\">Map&lt;String, Int&gt; · 2</a>"))
        #expect(page.body.contains("<td>1970-01-01T00:00:00.000Z</td>"))
        #expect(page.body.contains("<span class=\"null\">null</span>"))
        #expect(page.body.contains("<form class=\"query\" id=\"query\" method=\"get\" action=\"/class/WebPerson\">"))
    }

    @Test func aClassPageComesInPagesOfFifty() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let view = Fixture.view(of: folder)
        let first = try await view.fetch("/class/WebDog")
        #expect(first.body.occurrences(of: "<a class=\"open\"") == 50)
        #expect(first.body.contains("page 1 of 2"))
        #expect(first.body.contains("<a href=\"/class/WebDog?page=2\">next →</a>"))
        let second = try await view.fetch("/class/WebDog?page=2")
        #expect(second.status == 200)
        #expect(second.body.occurrences(of: "<a class=\"open\"") == 10)
        #expect(second.body.contains("showing 51–60"))
        #expect(second.body.contains("<a class=\"open\" href=\"/object/WebDog?key=59\">60</a>"))
    }

    @Test(arguments: [("3", 404, "Page 3 is past the end: there are 2 pages."),
                      ("0", 400, "The page number must be a whole number from 1; &#39;0&#39; is not."),
                      ("two", 400, "&#39;two&#39; is not"),
                      ("99999999999999999999999", 400, "is not")])
    func aBadPageNumberIsAnErrorPage(page: String, status: Int, message: String) async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let response = try await Fixture.view(of: folder).fetch("/class/WebDog?page=\(page)")
        #expect(response.status == status)
        #expect(response.body.contains(message))
        #expect(response.body.contains("<p class=\"error\" id=\"error\">"))
    }

    @Test func aQueryFiltersSortsAndLimits() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let view = Fixture.view(of: folder)
        // As a browser's GET form sends it: spaces as '+', the rest percent-encoded.
        let query = try await view.fetch("/class/WebPerson?q=age+%3E+3+AND+name+BEGINSWITH+%27A%27&sort=age&order=desc&limit=")
        #expect(query.status == 200)
        #expect(query.body.contains("3 objects match"))
        let order = ["Alan", "Ada", "Al"].compactMap { query.body.range(of: "<td>\($0)</td>")?.lowerBound }
        #expect(order.count == 3 && order == order.sorted())
        #expect(!query.body.contains("<td>Bob</td>"))
        // The form shows the query it ran.
        #expect(query.body.contains("value=\"age &gt; 3 AND name BEGINSWITH &#39;A&#39;\""))
        #expect(query.body.contains("<option value=\"age\" selected>age</option>"))
        #expect(query.body.contains("<option value=\"desc\" selected>descending</option>"))

        let limited = try await view.fetch("/class/WebDog?sort=weight&order=desc&limit=3")
        #expect(limited.body.occurrences(of: "<a class=\"open\"") == 3)
        #expect(limited.body.contains("60 objects · showing 1–3 of the first 3"))
        #expect(limited.body.contains("<td>dog 59</td>"))
        // A sort through a link.
        let throughLink = try await view.fetch("/class/WebPerson?q=best%20!=%20nil&sort=best.name")
        #expect(throughLink.status == 200)
        #expect(throughLink.body.contains("1 object matches"))
    }

    @Test func aBadQueryIsA400ShowingWhereItWentWrong() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let view = Fixture.view(of: folder)
        let response = try await view.fetch("/class/WebPerson?q=name+%3D%3D+%27Ada%27+AND+colour+%3D%3D+3")
        #expect(response.status == 400)
        #expect(response.body.contains("class WebPerson has no property &#39;colour&#39;"))
        #expect(response.body.contains("<pre class=\"predicate\" id=\"predicate\">name == &#39;Ada&#39; AND <mark id=\"error-position\">c</mark>olour == 3</pre>"))
        #expect(response.body.contains("at offset 18 (character 19)"))
        // The form is there to correct it, holding the predicate.
        #expect(response.body.contains("value=\"name == &#39;Ada&#39; AND colour == 3\""))

        for (predicate, text) in [("name%20==", "at offset 7"), ("name%20==%20%25@", "invalid predicate"), ("name%20==%203", "invalid predicate"),
                                  ("%27unterminated", "unterminated string")] {
            let bad = try await view.fetch("/class/WebPerson?q=\(predicate)")
            #expect(bad.status == 400, "\(predicate)")
            #expect(bad.body.contains(text), "\(predicate)")
        }
    }

    /// Whatever a user types in the query box is a page: results (200) or what is wrong (400),
    /// never a stopped server.
    @Test(arguments: ["TRUEPREDICATE", "FALSEPREDICATE", "dogs.@count > 1", "ANY dogs.name == 'Rex'", "ALL dogs.weight > 0",
                      "SUBQUERY(dogs, $d, $d.weight > 1).@count > 0", "name IN {'Ada', 'Bob'}", "nickname == nil", "nickname != NULL",
                      "age BETWEEN {1, 5}", "name ==[c] 'ada'", "name LIKE 'A*'", "best.name == 'Rex'", "best == nil", "scores['chess'] == 7",
                      "'math' IN tags", "tags.@count == 2", "dogs.@sum.weight > 1", "dogs.@avg.weight < 2", "born < 0", "born > 1970-01-01@00:00:00",
                      "((((", "age > 'x'", "%@", "$0 == 1", "name.count == 1", "best.name.first == 'x'", "age == 1 AND", "NOT", "名前 == 'x'",
                      "age == 99999999999999999999999", "name == '\u{0}'", "dogs == 'x'", "scores == 3", "tags['a'] == 1", "@count > 1",
                      String(repeating: "(", count: 5_000) + "age > 1" + String(repeating: ")", count: 5_000),
                      String(repeating: "NOT ", count: 5_000) + "age > 1"])
    func anyPredicateIsAPage(predicate: String) async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let response = try await Fixture.view(of: folder).fetch("/class/WebPerson?q=" + Link.encode(predicate))
        #expect(response.status == 200 || response.status == 400, "\(predicate): \(response.status)")
        #expect(response.body.contains(response.status == 200 ? "id=\"summary\"" : "id=\"error\""))
    }

    @Test(arguments: [("sort=colour", "has no property &#39;colour&#39;"), ("sort=dogs", "which holds many values"),
                      ("sort=best", "is a link"), ("sort=name.count", "is not a link"), ("sort=best.owner", "has no property &#39;owner&#39;"),
                      ("limit=100000", "from 1 to 10000"), ("limit=0", "from 1 to 10000"), ("limit=-5", "from 1 to 10000"), ("limit=lots", "from 1 to 10000")])
    func aBadSortOrLimitIsA400(parameter: String, message: String) async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let response = try await Fixture.view(of: folder).fetch("/class/WebPerson?\(parameter)")
        #expect(response.status == 400)
        #expect(response.body.contains(message))
    }

    @Test func anObjectPageShowsEveryPropertyAndItsHistoryList() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let view = Fixture.view(of: folder)
        let ada = try await view.fetch("/object/WebPerson?pk=1")
        #expect(ada.status == 200)
        #expect(ada.body.contains("<h1>WebPerson 1</h1>"))
        #expect(ada.body.contains("<td data-property=\"name\">Ada</td>"))
        #expect(ada.body.contains("<td data-property=\"best\"><a class=\"link\" href=\"/object/WebDog?key=0\">WebDog #0</a></td>"))
        #expect(ada.body.contains("<a class=\"collection\" href=\"/object/WebPerson/property/dogs?pk=1\">2 elements</a>"))
        #expect(ada.body.contains("<li><a class=\"link\" href=\"/object/WebDog?key=1\">WebDog #1</a></li>"))
        #expect(ada.body.contains("<li><span class=\"muted\">chess:</span> 7</li>"))
        #expect(ada.body.contains("<ol id=\"history\" data-events=\"/object/WebPerson/events?pk=1\"></ol>"))
        #expect(ada.body.contains("new EventSource(list.dataset.events)"))

        let rex = try await view.fetch("/object/WebDog?key=0")
        #expect(rex.status == 200)
        #expect(rex.body.contains("<h1>WebDog #0</h1>"))
        #expect(rex.body.contains("<td data-property=\"weight\">0.5</td>"))

        // A string primary key holding URL syntax and markup round-trips through its link.
        let notes = try await view.fetch("/class/WebNote")
        let link = "/object/WebNote?pk=a%2Fb%3Fc%26d%3D%3Ce%3E%23f"
        #expect(notes.body.contains("href=\"\(link)\""))
        let note = try await view.fetch(link)
        #expect(note.status == 200)
        #expect(note.body.contains("<td data-property=\"blob\">4 bytes: deadbeef</td>"))
        #expect(note.body.contains("<td data-property=\"mixed\"><a class=\"link\" href=\"/object/WebDog?key=1\">WebDog #1</a></td>"))
        #expect(note.body.contains("<td data-property=\"uuid\">6F9619FF-8B86-D011-B42D-00C04FC964FF</td>"))
        #expect(note.body.contains("<td data-property=\"price\">12.50</td>"))
        // An embedded object has no primary key: it is followed by its key, and its page shows it.
        let place = try #require(note.body.firstRange(of: #/href="(/object/WebPlace\?key=[0-9]+)"/#).map { String(note.body[$0].dropFirst(6).dropLast()) })
        let embedded = try await view.fetch(place)
        #expect(embedded.status == 200)
        #expect(embedded.body.contains("<td data-property=\"city\">Lovelace &lt;Town&gt;</td>"))
    }

    @Test func collectionPagesShowTheirElements() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let view = Fixture.view(of: folder)
        let dogs = try await view.fetch("/object/WebPerson/property/dogs?pk=1")
        #expect(dogs.status == 200)
        #expect(dogs.body.contains("List&lt;WebDog&gt; · 2 elements"))
        #expect(dogs.body.contains("<td>Fido</td>"))   // the elements as rows of their class
        let tags = try await view.fetch("/object/WebPerson/property/tags?pk=1")
        #expect(tags.body.contains("<td>math</td>") && tags.body.contains("<td>poetry</td>"))
        let scores = try await view.fetch("/object/WebPerson/property/scores?pk=1")
        #expect(scores.body.contains("<tr><td class=\"num\">go</td><td>9</td></tr>"))
        let empty = try await view.fetch("/object/WebPerson/property/dogs?pk=2")
        #expect(empty.body.contains("no objects"))
    }

    @Test(arguments: [("/class/Nope", 404, "The file has no class &#39;Nope&#39;. It has: WebDog, WebNote, WebPerson, WebPlace."),
                      ("/object/WebPerson?pk=99", 404, "There is no WebPerson 99 in the file."),
                      ("/object/WebPerson?pk=abc", 400, "&#39;abc&#39; is not a primary key of WebPerson: its primary key id is Int."),
                      ("/object/WebPerson", 400, "Name the object with ?pk="),
                      ("/object/WebPerson?key=x", 400, "The object key &#39;x&#39; is not a whole number."),
                      ("/object/WebDog?pk=1", 400, "Class WebDog has no primary key"),
                      ("/object/WebDog?key=999", 404, "There is no WebDog #999 in the file."),
                      ("/object/Nope?pk=1", 404, "The file has no class &#39;Nope&#39;"),
                      ("/object/WebPerson/property/colour?pk=1", 404, "Class WebPerson has no property &#39;colour&#39;."),
                      ("/object/WebPerson/property/name?pk=1", 400, "WebPerson.name is a String, not a list, set or map."),
                      ("/object/WebPerson/property/dogs?pk=1&page=2", 404, "Page 2 is past the end"),
                      ("/object/WebPerson/events?pk=99", 404, "There is no WebPerson 99"),
                      ("/object/WebPerson/events?pk=1&max=0", 400, "max must be a whole number of changes from 1 to 1000"),
                      ("/nowhere", 404, "There is no page at /nowhere."),
                      ("/class/%FF", 400, "The address does not name a class that can be read.")])
    func badAddressesAreErrorPages(uri: String, status: Int, message: String) async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let response = try await Fixture.view(of: folder).fetch(uri)
        #expect(response.status == status)
        #expect(response.body.contains(message), "\(response.body)")
        #expect(response.body.contains("<!DOCTYPE html>"))
    }

    /// Strings from the file, and from the request, may hold markup: every page shows them as text.
    @Test func markupInTheFileAndInRequestsIsShownEscaped() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let view = Fixture.view(of: folder)
        let escaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;b&gt;&quot;bold&quot; &amp; co&lt;/b&gt;"
        let pages = [
            try await view.fetch("/class/WebPerson"),
            try await view.fetch("/object/WebPerson?pk=5"),
            try await view.fetch("/class/WebPerson?q=name+BEGINSWITH+%27%3Cscript%27"),
            try await view.fetch("/object/WebNote?pk=a%2Fb%3Fc%26d%3D%3Ce%3E%23f"),
        ]
        for page in pages {
            #expect(page.status == 200)
            #expect(page.body.contains(escaped), "\(page.body)")
            #expect(!page.body.contains("<script>alert"))
            #expect(!page.body.contains("<b>\"bold"))
        }
        #expect(pages[1].body.contains("<td data-property=\"nickname\">\(escaped)</td>"))
        // Markup in a bad request comes back as text too.
        let probes = [
            try await view.fetch("/class/%3Cscript%3Ealert(1)%3C%2Fscript%3E"),
            try await view.fetch("/class/WebPerson?q=%3Cscript%3Ealert(1)%3C/script%3E"),
            try await view.fetch("/class/WebPerson?limit=%3Cscript%3E"),
            try await view.fetch("/object/WebPerson?pk=%3Cscript%3E"),
        ]
        for probe in probes {
            #expect(probe.status == 400 || probe.status == 404)
            #expect(!probe.body.contains("<script>alert"), "\(probe.body)")
            #expect(!probe.body.contains("<script>") || probe.body.occurrences(of: "<script>") == 0)
        }
    }

    @Test func theInfoPageDescribesTheFile() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let info = try await Fixture.view(of: folder).fetch("/info")
        #expect(info.status == 200)
        #expect(info.body.contains("<dd data-field=\"format version\">4 (realm file)</dd>"))
        #expect(info.body.contains("<dd data-field=\"encryption\">none</dd>"))
        #expect(info.body.contains("<dd data-field=\"compression\">none</dd>"))
        #expect(info.body.contains("<dd data-field=\"objects\">67 in 4 classes</dd>"))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: folder.fileURL.path)[.size] as? Int)
        #expect(info.body.contains("<dd data-field=\"file size\">\(size) bytes"))
        #expect(info.body.contains("<a href=\"/class/WebDog\">WebDog</a></td><td class=\"num\">60</td>"))
    }

    @Test func anEncryptedFileIsShownWithItsKeyAndRefusedWithout() async throws {
        let folder = WebFolder()
        let key = Data((0..<64).map { UInt8($0) })
        try Fixture.write(in: folder, encryptionKey: key)
        let info = try await Fixture.view(of: folder, encryptionKey: key).fetch("/info")
        #expect(info.body.contains("<dd data-field=\"encryption\">encrypted (AES-256, authenticated pages)</dd>"))
        #expect(info.body.contains("<dd data-field=\"format version\">6 (realm file)</dd>"))
        let people = try await Fixture.view(of: folder, encryptionKey: key).fetch("/class/WebPerson")
        #expect(people.body.contains("<td>Ada</td>"))
        // Without the key: a 500 page with the library's message, not a crash.
        let refused = try await Fixture.view(of: folder).fetch("/")
        #expect(refused.status == 500)
        #expect(refused.body.contains("the file is encrypted"))
    }

    @Test func theViewListensOnLoopbackAddressesOnly() async throws {
        #expect(RealmWebView.isLoopback("127.0.0.1"))
        #expect(RealmWebView.isLoopback("127.1.2.3"))
        #expect(RealmWebView.isLoopback("::1"))
        #expect(RealmWebView.isLoopback("localhost"))
        for host in ["0.0.0.0", "192.168.1.2", "::", "example.com", "127.0.0.256", "127.0.0"] {
            #expect(!RealmWebView.isLoopback(host), "\(host)")
        }
        let view = RealmWebView(fileURL: WebFolder().fileURL, encryptionKey: nil)
        await #expect(throws: Realm.Error.self) { try await view.run(host: "0.0.0.0", port: 0) }
        #expect(PageMiddleware.hostName("127.0.0.1:8080") == "127.0.0.1")
        #expect(PageMiddleware.hostName("[::1]:8080") == "::1")
        #expect(PageMiddleware.hostName("evil.example") == "evil.example")
    }

    /// The file's bytes are the same after every page was read, and nothing but the lock file
    /// (which a read-only open joins or makes, so that writers can coexist with it) is beside it.
    @Test func readingEveryPageChangesNothingInTheFile() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        try FileManager.default.removeItem(at: folder.url.appendingPathComponent("people.realm.lock"))
        let before = try Data(contentsOf: folder.fileURL)
        let view = Fixture.view(of: folder)
        for uri in ["/", "/info", "/class/WebPerson", "/class/WebPerson?q=age%20%3E%203&sort=name", "/object/WebPerson?pk=1",
                    "/object/WebPerson/property/scores?pk=1", "/class/WebDog?page=2", "/object/WebDog?key=3"] {
            #expect(try await view.fetch(uri).status == 200, "\(uri)")
        }
        await view.store.close()
        #expect(try Data(contentsOf: folder.fileURL) == before)
        let beside = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
        #expect(beside == ["people.realm", "people.realm.lock"])
    }

    /// A damaged file is refused when the view opens it (`verifyIntegrityOnOpen`): every page
    /// is a 500 page naming the damage and `run` throws before it listens. Without the check,
    /// the page that read the damaged node stopped the server: a `DynamicObject`'s reads
    /// cannot throw.
    @Test(.timeLimit(.minutes(1))) func aDamagedFileIsA500PageAndRunThrowsBeforeListening() async throws {
        let original = WebFolder(), folder = WebFolder()
        // A copy holds the newest version only: the node holding a dog's name is one it reaches.
        try Realm(configuration: Fixture.write(in: original)).writeCopy(toFile: folder.fileURL)
        var bytes = try Data(contentsOf: folder.fileURL)
        let offset = try #require(bytes.range(of: Data("dog 42".utf8))).lowerBound
        bytes[offset] ^= 0x5A
        try bytes.write(to: folder.fileURL)
        let view = Fixture.view(of: folder)
        for uri in ["/", "/info", "/class/WebPerson", "/class/WebDog?page=2", "/object/WebPerson?pk=1",
                    "/object/WebPerson/property/dogs?pk=1", "/object/WebDog?key=42", "/object/WebPerson/events?pk=1"] {
            let page = try await view.fetch(uri)
            #expect(page.status == 500, "\(uri)")
            #expect(page.body.contains("damaged"), "\(uri)")
        }
        await #expect(throws: Realm.Error.self) { try await Fixture.view(of: folder).run(port: 0) { _ in Issue.record("it must not listen") } }
    }

    @Test func runThrowsForAMissingFileBeforeListening() async throws {
        let folder = WebFolder()
        let view = RealmWebView(fileURL: folder.fileURL, encryptionKey: nil)
        await #expect(throws: Realm.Error.self) { try await view.run(port: 0) { _ in Issue.record("it must not listen") } }
        #expect(!FileManager.default.fileExists(atPath: folder.fileURL.path))
    }
}
