import Foundation
import RealmStorage

// What the comparisons of a predicate mean for stored values.
//
// - Numbers of every type (integers, floats, doubles, decimals) compare with each other by
//   value, exactly (an integer and a double are not both rounded to doubles). NaN is unordered
//   and equal to nothing.
// - Strings and data compare by their bytes (UTF-8), as Realm does: "é" written as one code
//   point differs from "e" + a combining accent. [c] folds case and [d] removes diacritics
//   before comparing (for every script Foundation knows, not only Latin).
// - Dates, ObjectIds and UUIDs are ordered; booleans and objects are only equal or not.
// - nil equals nil and nothing else, and is never ordered: `age > 3` is false for a nil age.
// - Values of types that do not compare (a string and a number in a mixed property) are
//   unequal and unordered.

enum ValueComparison {
    /// The order of `a` and `b` (-1, 0, 1), or nil when they are not ordered.
    static func order(_ a: Value, _ b: Value) -> Int? {
        switch (a, b) {
        case (.null, _), (_, .null): return nil
        case (.int(let x), .int(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.string(let x), .string(let y)): return bytes(x.utf8, y.utf8)
        case (.binary(let x), .binary(let y)): return bytes(x, y)
        case (.timestamp(let x), .timestamp(let y)): return x < y ? -1 : (x == y ? 0 : 1)
        case (.bool(let x), .bool(let y)): return x == y ? 0 : (!x ? -1 : 1)
        case (.objectId(let x), .objectId(let y)): return bytes(x.bytes(12), y.bytes(12))
        case (.uuid(let x), .uuid(let y)): return bytes(x.bytes(16), y.bytes(16))
        case (.link(let x), .link(let y)): return x == y ? 0 : nil
        case (.typedLink(let t1, let k1), .typedLink(let t2, let k2)): return t1 == t2 && k1 == k2 ? 0 : nil
        default: return numericOrder(a, b)
        }
    }

    /// The order of `a` and `b` with [c] and [d] applied to strings.
    static func order(_ a: Value, _ b: Value, _ options: StringOptions) -> Int? {
        if !options.isEmpty, case .string(let x) = a, case .string(let y) = b {
            return bytes(fold(x, options).utf8, fold(y, options).utf8)
        }
        return order(a, b)
    }

    /// Whether `a` equals `b`, with [c] and [d] applied to strings.
    static func equal(_ a: Value, _ b: Value, _ options: StringOptions = []) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let x), .string(let y)) where !options.isEmpty:
            return fold(x, options).utf8.elementsEqual(fold(y, options).utf8)
        default: return order(a, b) == 0
        }
    }

    // MARK: Numbers

    private enum Number {
        case int(Int64)
        case double(Double)
        case decimal(Decimal128)
    }

    private static func number(_ v: Value) -> Number? {
        switch v {
        case .int(let i): return .int(i)
        case .float(let f): return .double(Double(f))
        case .double(let d): return .double(d)
        case .decimal: return .decimal(Decimal128._rlmGet(_StoredValue(v)))
        default: return nil
        }
    }

    private static func numericOrder(_ a: Value, _ b: Value) -> Int? {
        guard let x = number(a), let y = number(b) else { return nil }
        switch (x, y) {
        case (.int(let i), .int(let j)): return i < j ? -1 : (i == j ? 0 : 1)
        case (.double(let d), .double(let e)):
            if d.isNaN || e.isNaN { return nil }
            return d < e ? -1 : (d == e ? 0 : 1)
        case (.int(let i), .double(let d)): return order(i, d)
        case (.double(let d), .int(let i)): return order(i, d).map { -$0 }
        default:
            let p = decimal(x), q = decimal(y)
            if p.isNaN || q.isNaN { return nil }
            return p < q ? -1 : (p == q ? 0 : 1)
        }
    }

    private static func decimal(_ n: Number) -> Decimal128 {
        switch n {
        case .int(let i): return Decimal128(i)
        case .double(let d): return Decimal128(d)
        case .decimal(let d): return d
        }
    }

    /// An integer against a double, exactly: the double's integer part is compared as an
    /// integer (converting the integer to a double would round above 2^53).
    private static func order(_ i: Int64, _ d: Double) -> Int? {
        if d.isNaN { return nil }
        if d >= 9_223_372_036_854_775_808.0 { return -1 }
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = d.rounded(.down)
        let w = Int64(whole)
        if i != w { return i < w ? -1 : 1 }
        return whole < d ? -1 : 0
    }

    private static func bytes<A: Sequence<UInt8>, B: Sequence<UInt8>>(_ a: A, _ b: B) -> Int {
        var i = a.makeIterator(), j = b.makeIterator()
        while true {
            switch (i.next(), j.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }

    // MARK: Strings

    /// `text` with case folded ([c]) and diacritics removed ([d]); ASCII text without
    /// Foundation.
    static func fold(_ text: String, _ options: StringOptions) -> String {
        guard !options.isEmpty else { return text }
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            guard options.contains(.caseInsensitive) else { return text }
            return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        }
        var folding: String.CompareOptions = []
        if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
        var folded = text.folding(options: folding, locale: nil)
        if options.contains(.caseInsensitive) { folded = folded.lowercased() }
        return folded
    }

    /// BEGINSWITH, ENDSWITH, CONTAINS and LIKE of `a` against the pattern `b`.
    static func matches(_ op: ComparisonOperator, _ a: Value, _ b: Value, _ options: StringOptions) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)):
            let text = fold(x, options), pattern = fold(y, options)
            switch op {
            case .beginsWith: return text.utf8.starts(with: pattern.utf8)
            case .endsWith: return text.utf8.reversed().starts(with: pattern.utf8.reversed())
            case .contains: return contains(Array(text.utf8), Array(pattern.utf8))
            case .like: return like(Array(text.unicodeScalars), Array(pattern.unicodeScalars))
            default: return false
            }
        case (.binary(let x), .binary(let y)):
            switch op {
            case .beginsWith: return x.starts(with: y)
            case .endsWith: return x.reversed().starts(with: y.reversed())
            case .contains: return contains(x, y)
            default: return false
            }
        default:
            return false
        }
    }

    static func contains(_ text: [UInt8], _ part: [UInt8]) -> Bool {
        guard !part.isEmpty else { return true }
        guard part.count <= text.count else { return false }
        let first = part[0]
        var i = 0
        while i <= text.count - part.count {
            if text[i] == first, text[i..<i + part.count].elementsEqual(part) { return true }
            i += 1
        }
        return false
    }

    /// LIKE: `?` matches one character (Unicode scalar), `*` any run of them, including none.
    /// Linear in practice: on a mismatch after a `*`, the `*` takes one more character.
    static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        var t = 0, p = 0
        var star: Int? = nil, resume = 0
        while t < text.count {
            if p < pattern.count, pattern[p] == "*" {
                star = p
                resume = t
                p += 1
            } else if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
                t += 1
                p += 1
            } else if let s = star {
                p = s + 1
                resume += 1
                t = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}

/// A value hashed and compared as queries compare it (`ResultsQuery.sortOrder`): strings by
/// their bytes, numbers of every type by value (1 == 1.0), NaN equal to NaN. Swift's own
/// `Value` equality would merge canonically equivalent strings and keep 1 and 1.0 apart.
struct ExactValue: Hashable {
    let value: Value
    init(_ value: Value) { self.value = value }

    static func == (a: ExactValue, b: ExactValue) -> Bool { ResultsQuery.sortOrder(a.value, b.value) == 0 }

    func hash(into hasher: inout Hasher) {
        switch value {
        case .string(let s): hasher.combine(0 as UInt8); for byte in s.utf8 { hasher.combine(byte) }
        case .int(let i): hasher.combine(1 as UInt8); hasher.combine(Double(i))
        case .float(let f): hasher.combine(1 as UInt8); hasher.combine(f.isNaN ? 0 : Double(f))
        case .double(let d): hasher.combine(1 as UInt8); hasher.combine(d.isNaN ? 0 : d)
        case .decimal:
            let d = Decimal128._rlmGet(_StoredValue(value))
            hasher.combine(1 as UInt8)
            hasher.combine(d.isNaN ? 0 : d.doubleValue)
        default: hasher.combine(2 as UInt8); hasher.combine(value)
        }
    }
}
