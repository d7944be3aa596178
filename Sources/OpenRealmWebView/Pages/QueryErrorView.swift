/// A predicate the library refused, with the place it names marked.
///
/// The library's `invalidQuery` message reads `invalid predicate '<predicate>' at offset <n>:
/// <reason>`, the offset a UTF-8 byte offset into the predicate (PredicateParser.swift, rule
/// 1); the predicate is echoed first, so the offset is read after it, never found by searching
/// text the user typed.
enum QueryErrorView {
    /// The byte offset `message` gives for `predicate`, if it gives one.
    static func offset(in message: String, predicate: String) -> Int? {
        let prefix = "invalid predicate '\(predicate)' at offset "
        guard message.hasPrefix(prefix) else { return nil }
        let digits = message.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber }
        return Int(digits)
    }

    /// The predicate with the offset `message` names marked, and the offset said in words.
    static func html(predicate: String, message: String) -> HTML {
        guard let offset = offset(in: message, predicate: predicate) else {
            return "<pre class=\"predicate\" id=\"predicate\">\(predicate)</pre>"
        }
        let bytes = Array(predicate.utf8)
        let at = min(max(offset, 0), bytes.count)
        // The mark covers one character (a space at the end, where something is missing).
        var end = at
        if end < bytes.count {
            end += 1
            while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        }
        let before = String(decoding: bytes[..<at], as: UTF8.self)
        let marked = at < bytes.count ? String(decoding: bytes[at..<end], as: UTF8.self) : " "
        let after = String(decoding: bytes[end...], as: UTF8.self)
        let column = before.count + 1
        return """
            <pre class="predicate" id="predicate">\(before)<mark id="error-position">\(marked)</mark>\(after)</pre>
            <p class="muted" id="offset">at offset \(offset) (character \(column))</p>
            """
    }
}
