// HTML built so that what comes from the file cannot become markup.
//
// Every string a realm file holds (class and property names, string values, primary keys) and
// every string a request brings (a predicate, a page number) may contain `<script>`. `HTML`
// makes escaping the default instead of a step to remember: interpolating anything into an
// `HTML` literal escapes it, and only another `HTML` value (a fragment built the same way) is
// inserted as markup. The literal text of the templates is the only raw markup there is.
//
//     let row: HTML = "<td>\(name)</td>"          // name escaped
//     let page: HTML = "<tr>\(row)</tr>"          // row inserted as markup
//
// Attribute values are quoted with `"` and escaped the same way (`&`, `<`, `>`, `"`, `'`), so
// one escape serves text and attributes; URLs are percent-encoded first (`Link.swift`), then
// escaped as any attribute. The pages' inline script reads what it needs from data attributes
// and writes what it receives with `textContent`, never `innerHTML`.

/// A fragment of HTML: markup from templates, with every interpolated value escaped.
struct HTML: ExpressibleByStringInterpolation, Sendable {
    /// The markup.
    private(set) var rendered: String

    init(stringLiteral value: String) {
        rendered = value
    }

    init(stringInterpolation: StringInterpolation) {
        rendered = stringInterpolation.rendered
    }

    /// Fragments one after another.
    init(joining fragments: some Sequence<HTML>) {
        rendered = fragments.map(\.rendered).joined()
    }

    static let empty: HTML = ""

    struct StringInterpolation: StringInterpolationProtocol {
        var rendered = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            rendered.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            rendered += literal
        }

        /// Markup built as `HTML`: inserted as it is.
        mutating func appendInterpolation(_ html: HTML) {
            rendered += html.rendered
        }

        /// Fragments one after another.
        mutating func appendInterpolation(_ fragments: [HTML]) {
            for fragment in fragments { rendered += fragment.rendered }
        }

        /// Any other value: its description, escaped. (Optionals do not compile here: say
        /// what nil shows.)
        mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            rendered += HTML.escape(value.description)
        }
    }

    /// `text` with the five characters that matter in text and quoted attributes escaped.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
