import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import OpenRealm
import ServiceLifecycle
import Testing
@testable import OpenRealmWebView

// The file the web view tests look at, written with model classes and read back without them,
// and the ways the tests reach the web view: through its router (HummingbirdTesting) or a
// server listening on 127.0.0.1 at a port the system chose.

final class WebPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var nickname: String?
    @Persisted var best: WebDog?
    @Persisted var dogs: List<WebDog>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var born = Date(timeIntervalSince1970: 0)
}

/// A class without a primary key: its objects are addressed by their keys.
final class WebDog: Object {
    @Persisted var name = ""
    @Persisted var weight = 0.0
}

/// A class whose string primary keys hold what URLs and markup give meaning to, with the
/// value types the other classes lack and an embedded object.
final class WebNote: Object {
    @Persisted(primaryKey: true) var title = ""
    @Persisted var body = ""
    @Persisted var blob = Data()
    @Persisted var mixed: AnyRealmValue
    @Persisted var objectId = ObjectId()
    @Persisted var uuid = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!
    @Persisted var price = Decimal128()
    @Persisted var place: WebPlace?
}

final class WebPlace: EmbeddedObject {
    @Persisted var city = ""
}

/// A fresh folder per test (tests run in parallel), removed when it goes.
final class WebFolder: @unchecked Sendable {
    // @unchecked: `url` is immutable; the folder is removed in deinit.
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("openrealm-webview-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    var fileURL: URL { url.appendingPathComponent("people.realm") }

    /// The configuration that writes the file with the model classes.
    func writing(encryptionKey: Data? = nil) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: fileURL, objectTypes: [WebPerson.self, WebDog.self, WebNote.self, WebPlace.self])
        configuration.encryptionKey = encryptionKey
        return configuration
    }
}

enum Fixture {
    static let markup = "<script>alert('x')</script><b>\"bold\" & co</b>"
    static let dogCount = 60

    /// Writes the people, their dogs (60, for two pages) and the notes.
    @discardableResult
    static func write(in folder: WebFolder, encryptionKey: Data? = nil) throws -> Realm.Configuration {
        let configuration = folder.writing(encryptionKey: encryptionKey)
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let dogs = (0..<dogCount).map { index in
                let dog = WebDog()
                dog.name = index == 0 ? "Rex" : index == 1 ? "Fido" : "dog \(index)"
                dog.weight = Double(index) + 0.5
                realm.add(dog)
                return dog
            }
            let ada = realm.create(WebPerson.self, value: ["id": 1, "name": "Ada", "age": 36, "nickname": "countess"])
            ada.best = dogs[0]
            ada.dogs.append(objectsIn: [dogs[0], dogs[1]])
            ada.tags.insert(objectsIn: ["math", "poetry"])
            ada.scores["chess"] = 7
            ada.scores["go"] = 9
            realm.create(WebPerson.self, value: ["id": 2, "name": "Alan", "age": 41])
            realm.create(WebPerson.self, value: ["id": 3, "name": "Bob", "age": 2])
            realm.create(WebPerson.self, value: ["id": 4, "name": "Al", "age": 5])
            realm.create(WebPerson.self, value: ["id": 5, "name": markup, "age": 1, "nickname": markup])
            let note = realm.create(WebNote.self, value: ["title": "a/b?c&d=<e>#f", "body": markup, "blob": Data([0xde, 0xad, 0xbe, 0xef])])
            note.mixed = .object(dogs[1])
            note.price = try! Decimal128(string: "12.50")
            note.place = WebPlace(value: ["city": "Lovelace <Town>"])
        }
        return configuration
    }

    /// The web view of the folder's file.
    static func view(of folder: WebFolder, encryptionKey: Data? = nil) -> RealmWebView {
        var view = RealmWebView(fileURL: folder.fileURL, encryptionKey: encryptionKey)
        view.historyInterval = .milliseconds(50)
        return view
    }
}

/// A response's status and body as text.
struct Fetched {
    var status: Int
    var body: String
    var headers: HTTPFields
}

extension RealmWebView {
    /// `uri` through the router (HummingbirdTesting's `.router` framework).
    func fetch(_ uri: String) async throws -> Fetched {
        let application = Application(router: makeRouter())
        return try await application.test(.router) { client in
            try await client.execute(uri: uri, method: .get) { response in
                Fetched(status: Int(response.status.code), body: String(buffer: response.body), headers: response.headers)
            }
        }
    }

    /// Runs `body` with the web view listening on 127.0.0.1 at a port the system chose, then
    /// shuts it down gracefully and closes the realm.
    func whileListening<T: Sendable>(_ body: @Sendable (Int) async throws -> T) async throws -> T {
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        let application = try makeApplication(host: "127.0.0.1", port: 0) { port in announce.yield(port) }
        let group = ServiceGroup(configuration: .init(services: [application], logger: Logger(label: "OpenRealmWebViewTests")))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            running.cancel()
            throw WebViewTestError("the web view did not start listening")
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(port))
        } catch {
            result = .failure(error)
        }
        await group.triggerGracefulShutdown()
        try await running.value
        await store.close()
        return try result.get()
    }
}

struct WebViewTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension String {
    /// How many times `text` occurs.
    func occurrences(of text: String) -> Int {
        components(separatedBy: text).count - 1
    }
}
