import Foundation
import Hummingbird
import OpenRealm

/// A read-only web view of a realm file, for a browser on the same machine: the classes with
/// their object counts, a paged table of each class's objects, each object's page with links
/// followed and lists, sets and maps opened, a query box taking predicate strings, the file's
/// info, and an object's changes while its page is open (server-sent events).
///
/// ```swift
/// let view = RealmWebView(fileURL: URL(fileURLWithPath: "todos.realm"), encryptionKey: nil)
/// try await view.run(port: 8080) { port in print("http://127.0.0.1:\(port)/") }
/// ```
///
/// The file is opened read-only with the dynamic API (no model classes needed) and nothing is
/// ever written to it; writers in other processes go on committing, and the pages show their
/// commits when they are loaded. The server listens on a loopback address only and answers
/// only requests addressed to one (no authentication: the machine's own users are trusted),
/// and every value shown is escaped.
public struct RealmWebView: Sendable {
    /// The realm file shown.
    public let fileURL: URL
    let store: RealmActor
    let site: Site
    /// How often an object's history stream looks for new commits (HistoryStream.swift).
    var historyInterval: Duration = .milliseconds(250)

    /// A web view of the realm file at `fileURL`, encrypted with `encryptionKey` (64 bytes)
    /// or not. Nothing is opened until `run`.
    public init(fileURL: URL, encryptionKey: Data?) {
        self.fileURL = fileURL
        var configuration = Realm.Configuration(fileURL: fileURL, readOnly: true, encryptionKey: encryptionKey)
        configuration.isDynamic = true
        // Checked whole at open: pages read values through `DynamicObject`'s subscript, which
        // cannot throw, and damage met there would stop the server; found at open, it is
        // `fileCorrupted`, thrown by `run` before anything listens.
        configuration.verifyIntegrityOnOpen = true
        store = RealmActor(configuration: configuration)
        site = Site(fileName: fileURL.lastPathComponent)
    }

    /// Opens the file and serves the web view on `host`, a loopback address, at `port` (0: a
    /// port the system chooses, told to `onListening`), until the task is cancelled or the
    /// process gets SIGINT or SIGTERM; then it stops taking requests, ends the history streams
    /// and closes the file.
    ///
    /// ```swift
    /// try await RealmWebView(fileURL: url, encryptionKey: key).run(port: 0) { port in
    ///     print("listening on http://127.0.0.1:\(port)/")
    /// }
    /// ```
    ///
    /// - Throws: `Realm.Error` `invalidArgument` for a host that is not a loopback address;
    ///   what opening the realm throws (`fileNotFound`, `decryptionFailed`, `invalidDatabase`,
    ///   `fileCorrupted`, …), before anything listens; what binding the port throws.
    public func run(host: String = "127.0.0.1", port: Int, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let application = try makeApplication(host: host, port: port, onListening: onListening)
        // Opened now, so that a missing file or a wrong key stops `run` before it listens.
        try await store.read { _ in }
        do {
            try await application.runService()
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    /// The application serving the web view on `host` and `port`: `run` runs it; tests run it
    /// in a service group of their own, or hand `makeRouter()` to HummingbirdTesting.
    ///
    /// - Throws: `Realm.Error` `invalidArgument` for a host that is not a loopback address.
    func makeApplication(host: String, port: Int, onListening: @escaping @Sendable (Int) async -> Void) throws(Realm.Error) -> some ApplicationProtocol {
        guard Self.isLoopback(host) else {
            throw Realm.Error(.invalidArgument, "the web view listens on a loopback address only (127.0.0.1, ::1 or localhost), not '\(host)': "
                              + "it has no authentication; reach it from another machine through an SSH tunnel")
        }
        return Application(
            router: makeRouter(),
            configuration: .init(address: .hostname(host, port: port), serverName: "OpenRealmWebView"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) }
        )
    }

    /// Whether `host` names this machine's loopback interface.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}

extension RealmWebView {
    /// The routes of the web view (Link.swift lists them).
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: PageMiddleware(site: site))
        let view = self
        router.get("/") { _, _ in
            await view.respond { realm throws(PageError) in try ClassesPage.render(realm, site: view.site) }
        }
        router.get("/info") { _, _ in
            await view.respond { realm throws(PageError) in try InfoPage.render(realm, site: view.site) }
        }
        router.get("/class/:class") { request, context in
            let parameters = Link.parameters(of: request.uri.query)
            let className = try Self.pathParameter("class", context)
            return await view.respond { realm throws(PageError) in
                try ClassPage.render(realm, ClassPage.Request(className: className, parameters: parameters), site: view.site)
            }
        }
        router.get("/object/:class") { request, context in
            let address = try ObjectAddress(className: try Self.pathParameter("class", context), parameters: Link.parameters(of: request.uri.query))
            return await view.respond { realm throws(PageError) in try ObjectPage.render(realm, address, site: view.site) }
        }
        router.get("/object/:class/property/:property") { request, context in
            let parameters = Link.parameters(of: request.uri.query)
            let address = try ObjectAddress(className: try Self.pathParameter("class", context), parameters: parameters)
            let property = try Self.pathParameter("property", context)
            return await view.respond { realm throws(PageError) in
                try CollectionPage.render(realm, address, property: property, page: parameters["page"] ?? "", site: view.site)
            }
        }
        router.get("/object/:class/events") { request, context in
            let parameters = Link.parameters(of: request.uri.query)
            let address = try ObjectAddress(className: try Self.pathParameter("class", context), parameters: parameters)
            let maxChanges = try Self.maxChanges(parameters["max"])
            // The object is looked up first, so that an unknown one is a 404, not an empty stream.
            let missing = await view.respond { realm throws(PageError) in
                _ = try address.resolve(in: realm)
                return Page(status: 200, document: "")
            }
            guard missing.status.code == 200 else { return missing }
            return HistoryStream(store: view.store, interval: view.historyInterval).response(address, maxChanges: maxChanges)
        }
        return router
    }

    /// The page `render` makes of the realm at the newest version, or the page of the
    /// `PageError` it throws; a realm that cannot be opened is a 500 page with the library's
    /// message.
    func respond(_ render: @escaping @Sendable (Realm) throws(PageError) -> Page) async -> Response {
        let page: Page
        do {
            page = try await store.read { realm in
                do throws(PageError) {
                    return try render(realm)
                } catch {
                    return Layout.errorPage(error, fileName: site.fileName)
                }
            }
        } catch {
            let message = (error as? Realm.Error)?.message ?? "\(error)"
            page = Layout.errorPage(PageError(.internalServerError, "Cannot read the file", message), fileName: site.fileName)
        }
        return PageMiddleware.response(page)
    }

    /// Path parameter `name`, percent-decoded.
    static func pathParameter(_ name: String, _ context: BasicRequestContext) throws(PageError) -> String {
        guard let raw = context.parameters.get(name), let decoded = raw.removingPercentEncoding else {
            throw PageError(.badRequest, "Bad address", "The address does not name a \(name) that can be read.")
        }
        return decoded
    }

    /// The `max` parameter of an event stream: nil, or a number of changes from 1 to 1,000.
    static func maxChanges(_ text: String?) throws(PageError) -> Int? {
        guard let text, !text.isEmpty else { return nil }
        guard let value = Int(text), (1...1_000).contains(value) else {
            throw PageError(.badRequest, "Bad max", "max must be a whole number of changes from 1 to 1000; '\(text)' is not.")
        }
        return value
    }
}
