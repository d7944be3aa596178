import Hummingbird

/// What every request goes through: requests addressed to another host than a loopback name are
/// refused, and every error becomes a page.
///
/// The host check stops DNS rebinding: a web page elsewhere whose name is made to resolve to
/// 127.0.0.1 could otherwise have the browser fetch this view and read the file's data. Its
/// requests carry that page's name in `Host` (the request's authority, in HTTPTypes), and are
/// answered 421 with nothing of the file.
///
/// Errors: a `PageError` (thrown before a page is rendered: a bad address or parameter) is
/// shown as its page, Hummingbird's `HTTPError` (no such route: 404) as a page with its
/// status, anything else as a 500 page. Nothing thrown reaches the server as an error.
struct PageMiddleware: RouterMiddleware {
    typealias Context = BasicRequestContext
    let site: Site

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let host = request.head.authority, !RealmWebView.isLoopback(Self.hostName(host)) {
            return Self.response(Layout.errorPage(PageError(.misdirectedRequest, "Misdirected request",
                                                            "This web view answers requests to 127.0.0.1, ::1 or localhost only."),
                                                  fileName: site.fileName))
        }
        do {
            return try await next(request, context)
        } catch let error as PageError {
            return Self.response(Layout.errorPage(error, fileName: site.fileName))
        } catch let error as HTTPError {
            let message = error.status == .notFound ? "There is no page at \(request.uri.path)." : error.body ?? error.status.reasonPhrase
            return Self.response(Layout.errorPage(PageError(error.status, error.status.reasonPhrase, message), fileName: site.fileName))
        } catch {
            return Self.response(Layout.errorPage(PageError(.internalServerError, "Internal error", "\(error)"), fileName: site.fileName))
        }
    }

    /// The host name of a `Host` header: without its port, an IPv6 address without brackets.
    static func hostName(_ host: String) -> String {
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            return String(host[host.index(after: host.startIndex)..<close])
        }
        return String(host.split(separator: ":", maxSplits: 1).first ?? "")
    }

    private static let referrerPolicy = HTTPFields.Element.Name("Referrer-Policy")!

    /// The response carrying `page`, with headers that keep the browser from loading or
    /// running anything the page does not hold itself: the only script is the page's inline
    /// one, the only connection the object's event stream, to this server.
    static func response(_ page: Page) -> Response {
        let headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; "
                + "img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
            .xContentTypeOptions: "nosniff",
            Self.referrerPolicy: "no-referrer",
            .cacheControl: "no-store",
        ]
        return Response(status: HTTPResponse.Status(code: page.status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: page.document)))
    }
}
