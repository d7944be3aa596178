import Hummingbird

/// What a request asked for that the file or the request itself cannot give: an unknown class,
/// object or property, a page past the end, a predicate that does not parse, a limit out of
/// range. Shown as a page with its status (4xx), its title and its message; `detail` is more
/// markup for the page (a predicate with its error marked, the query form to correct it).
struct PageError: Error, Sendable {
    var status: HTTPResponse.Status
    var title: String
    var message: String
    var detail: HTML = .empty

    init(_ status: HTTPResponse.Status, _ title: String, _ message: String, detail: HTML = .empty) {
        self.status = status
        self.title = title
        self.message = message
        self.detail = detail
    }
}
