import Foundation

/// Dates as export writes them: ISO 8601 in UTC with six fractional digits
/// (`2026-11-29T18:31:23.250000Z`). Microseconds, since a `Date` (a `Double` of seconds since
/// 2001) holds about that much precision for today's dates: written and read back, a date
/// gives the same text again.
enum DateText {
    static func string(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        var whole = seconds.rounded(.down)
        var micros = Int(((seconds - whole) * 1_000_000).rounded())
        if micros == 1_000_000 {
            whole += 1
            micros = 0
        }
        let base = Date(timeIntervalSince1970: whole).formatted(.iso8601)   // "…T18:31:23Z"
        let digits = String(micros)
        return String(base.dropLast()) + "." + String(repeating: "0", count: 6 - digits.count) + digits + "Z"
    }

    /// The date `text` names: the form `string` writes, or ISO 8601 with fewer or no
    /// fractional digits; nil for anything else.
    static func parse(_ text: String) -> Date? {
        guard text.hasSuffix("Z") else { return nil }
        let body = text.dropLast()
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        // The parser is lenient: "2020-02-30T00:00:00Z" reads as March 1st. A date it reads
        // must write back as the same text, or a date that does not exist would be imported as
        // another one without a word.
        let whole = String(parts[0]) + "Z"
        guard let base = try? Date.ISO8601FormatStyle().parse(whole), base.formatted(.iso8601) == whole else { return nil }
        guard parts.count == 2 else { return base }
        let digits = parts[1]
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let fraction = Double("0." + digits) else {
            return nil
        }
        return Date(timeIntervalSince1970: base.timeIntervalSince1970 + fraction)
    }
}
