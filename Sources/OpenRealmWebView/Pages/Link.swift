import Foundation

// The web view's URLs. Every page is a GET with its state in the URL, so each can be linked,
// bookmarked and loaded by a headless browser as it is:
//
//   /                                         classes, with their object counts
//   /info                                     the file: format, size, space, versions, encryption
//   /class/<Class>?q=&sort=&order=&limit=&page=   a page of the class's objects, or of a query's
//   /object/<Class>?pk=<primary key>          an object (by primary key; `key=<n>` by its key in
//   /object/<Class>?key=<n>                   the table, for classes without one)
//   /object/<Class>/property/<name>?pk=|key=&page=   a list, set or map of an object, paged
//   /object/<Class>/events?pk=|key=[&max=n]   the object's changes as server-sent events
//
// Path segments and query values are percent-encoded with nothing but the unreserved
// characters left as they are, so a name or key holding `/`, `?`, `&`, `#` or markup stays
// one segment or value; the pages escape the whole URL again as an attribute (HTML.swift).

/// Builds the web view's URLs.
enum Link {
    static let classes = "/"
    static let info = "/info"

    /// The page of class `className`, with `parameters` (empty values left out).
    static func classTable(_ className: String, _ parameters: [(String, String)] = []) -> String {
        "/class/" + encode(className) + query(parameters)
    }

    /// The page of the object at `address`.
    static func object(_ address: ObjectAddress) -> String {
        "/object/" + encode(address.className) + query([address.parameter])
    }

    /// The page of collection property `property` of the object at `address`.
    static func collection(_ address: ObjectAddress, _ property: String, page: Int = 1) -> String {
        "/object/" + encode(address.className) + "/property/" + encode(property)
            + query([address.parameter] + (page == 1 ? [] : [("page", String(page))]))
    }

    /// The event stream of the object at `address`.
    static func events(_ address: ObjectAddress) -> String {
        "/object/" + encode(address.className) + "/events" + query([address.parameter])
    }

    /// `?a=b&c=d` of the parameters whose values are not empty, or "" when none is left.
    static func query(_ parameters: [(String, String)]) -> String {
        let pairs = parameters.filter { !$0.1.isEmpty || $0.0 == "pk" }.map { encode($0.0) + "=" + encode($0.1) }
        return pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")
    }

    /// Unreserved characters (RFC 3986) as they are, every other byte percent-encoded.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encode(_ text: String) -> String {
        // Never nil: every string is valid Unicode, and each scalar is encoded as its UTF-8 bytes.
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// A query string's parameters as a browser's GET form sends them
    /// (`application/x-www-form-urlencoded`: `+` for a space), percent-decoded. A value that
    /// does not decode is kept as it came. The first of repeated names wins.
    static func parameters(of query: String?) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            let name = decode(parts[0])
            if parameters[name] == nil { parameters[name] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return parameters
    }
}
