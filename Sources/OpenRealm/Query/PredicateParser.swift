// The parser for NSPredicate-style predicate strings ("age > 5 AND name BEGINSWITH[c] %@").
// It produces the syntax tree of PredicateSyntax.swift; QueryBinder.swift then resolves the key
// paths against a class. Swift on Linux has no NSPredicate(format:), so this is our own.
//
// Shape: a lexer turns the UTF-8 bytes into tokens on demand, and a recursive-descent parser with
// one token of look-ahead builds the tree:
//
//     predicate  := and (("OR" | "||") and)*
//     and        := not (("AND" | "&&") not)*
//     not        := ("NOT" | "!")* primary
//     primary    := "(" predicate ")" | TRUEPREDICATE | FALSEPREDICATE | comparison
//     comparison := operand operator modifier? operand      (IN/BETWEEN: a list or %@ on the right)
//     operand    := value | %@ | quantifier? keypath | SUBQUERY(keypath, $var, predicate).@count
//     keypath    := part ("." part)*        part := name | $var | @aggregate | %K
//
// Invariants the rest of OpenRealm relies on:
// 1. Every position is a UTF-8 byte offset into the format string (error positions included), so
//    binding errors point at the same place the user sees.
// 2. Nothing traps, whatever the input: numbers are range-checked rather than converted with
//    trapping initialisers, arguments are bounds-checked, and nesting is capped (below) so neither
//    the parser's recursion nor the recursive walks and releases of the tree can exhaust a stack.
// 3. Argument indices count every placeholder (%@, %K, %d, …) in the order written, so `%K == %@`
//    reads arguments 0 and 1.

/// Turns a predicate format string into a `PredicateNode`.
enum PredicateParser {
    /// The deepest tree the parser builds (each AND, OR, NOT, comparison and subquery is a level).
    /// A left-deep chain of n ORs is n levels deep, and code that walks the tree, including the
    /// release of its boxes, recurses once per level; a thousand levels stays far from any stack limit.
    static let maximumDepth = 1000
    /// How deeply parentheses and subqueries may nest: each level costs the parser a few frames.
    static let maximumNesting = 100

    /// Parses an NSPredicate-style format string. `%@` becomes `.constant(.argument(i))` (i counts the
    /// %@ and %K placeholders consumed so far, i.e. the index into `arguments`); `%K` is replaced by the
    /// argument at its index, which must be a String holding a key path (possibly dotted: "dog.age").
    ///
    ///     let tree = try PredicateParser.parse("age > %@ AND %K BEGINSWITH[c] 'B'", arguments: [3, "name"])
    ///
    /// - Throws: `QueryError` with the UTF-8 offset of the problem and what was expected there.
    static func parse(_ format: String, arguments: [Any]) throws(QueryError) -> PredicateNode {
        var parser = try Parser(format: format, arguments: arguments)
        return try parser.parseWholePredicate()
    }
}

// MARK: - Tokens

extension PredicateParser {
    /// The words the grammar gives a meaning to. They are matched regardless of ASCII case, and never
    /// taken as the first property of a key path.
    fileprivate enum Keyword: String {
        case and = "AND", or = "OR", not = "NOT"
        case `in` = "IN", between = "BETWEEN", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH"
        case contains = "CONTAINS", like = "LIKE"
        case anyQuantifier = "ANY", someQuantifier = "SOME", allQuantifier = "ALL", noneQuantifier = "NONE"
        case subquery = "SUBQUERY", truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
        case trueValue = "TRUE", falseValue = "FALSE", yesValue = "YES", noValue = "NO"
        case nilValue = "NIL", nullValue = "NULL"

        init?(word: String) {
            self.init(rawValue: asciiCaseFolded(word, upper: true))
        }
    }

    fileprivate struct Token {
        enum Kind: Equatable {
            case end
            /// A name; `keyword` is set when the name is one of the grammar's words.
            case word(String, Keyword?)
            /// `$x`, with the `$`.
            case variable(String)
            /// `@sum`, with the `@`, as written.
            case aggregate(String)
            case integer(Int64)
            case double(Double)
            case string(String)
            /// `%@` (or a printf-style specifier such as `%d`): the argument at this index.
            case argument(Int)
            /// `%K`: the key path held by the argument at this index.
            case keyPathArgument(Int)
            /// `[c]`, `[d]`, `[cd]`.
            case modifier(StringOptions)
            /// Punctuation and symbolic operators: ( ) { } , . == = != <> < <= =< > >= => && || !
            case symbol(String)
        }
        var kind: Kind
        var start: Int
        var end: Int

        func isSymbol(_ text: String) -> Bool { kind == .symbol(text) }

        func isKeyword(_ keyword: Keyword) -> Bool {
            if case .word(_, keyword?) = kind { return true }
            return false
        }

        /// Whether a key path may start here: a name that is not a keyword, `$x` or `%K`.
        var startsKeyPath: Bool {
            switch kind {
            case .word(_, nil), .variable, .keyPathArgument: return true
            default: return false
            }
        }
    }
}

/// `text` with only its ASCII letters changed in case: "ın" (dotless i) must not become the keyword IN.
private func asciiCaseFolded(_ text: String, upper: Bool) -> String {
    let (from, to): (ClosedRange<UInt8>, UInt8) = upper ? (0x61...0x7A, 0x41) : (0x41...0x5A, 0x61)
    return String(decoding: text.utf8.map { from.contains($0) ? $0 - from.lowerBound + to : $0 }, as: UTF8.self)
}

// MARK: - Lexer

extension PredicateParser {
    /// Cuts the format string into tokens, one at a time so that errors come in reading order.
    fileprivate struct Lexer {
        let bytes: [UInt8]
        private var offset = 0
        private var placeholderCount = 0

        init(_ format: String) {
            bytes = Array(format.utf8)
        }

        func text(_ range: Range<Int>) -> String {
            String(decoding: bytes[range], as: UTF8.self)
        }

        mutating func next() throws(QueryError) -> Token {
            skipWhitespace()
            let start = offset
            guard start < bytes.count else { return Token(kind: .end, start: start, end: start) }
            let kind: Token.Kind
            switch Unicode.Scalar(bytes[start]) {
            case "'", "\"":
                kind = .string(try lexString())
            case "0"..."9":
                kind = try lexNumber()
            case "-", "+":
                guard start + 1 < bytes.count, isDigit(bytes[start + 1]) else { throw unexpectedCharacter(at: start) }
                kind = try lexNumber()
            case "$":
                kind = .variable(try lexPrefixedName(what: "a variable name"))
            case "@":
                kind = .aggregate(try lexPrefixedName(what: "an aggregate name such as count"))
            case "%":
                kind = try lexPlaceholder()
            case "[":
                kind = .modifier(try lexModifier())
            case "(", ")", "{", "}", ",", ".":
                offset += 1
                kind = .symbol(text(start..<offset))
            case "=", "<", ">", "!", "&", "|":
                kind = .symbol(try lexOperator())
            default:
                guard Lexer.isIdentifierStart(scalar(at: start).scalar) else { throw unexpectedCharacter(at: start) }
                skipIdentifierCharacters()
                let word = text(start..<offset)
                kind = .word(word, Keyword(word: word))
            }
            return Token(kind: kind, start: start, end: offset)
        }

        // MARK: Characters

        /// The scalar starting at byte `index`. The bytes came from a `String`, so they are valid
        /// UTF-8; the fallback only keeps this total.
        func scalar(at index: Int) -> (scalar: Unicode.Scalar, width: Int) {
            var iterator = bytes[index...].makeIterator()
            var decoder = UTF8()
            if case .scalarValue(let scalar) = decoder.decode(&iterator) {
                return (scalar, UTF8.width(scalar))
            }
            return ("\u{FFFD}", 1)
        }

        static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
            if scalar.isASCII { return scalar == "_" || isASCIILetter(scalar) }
            return scalar.properties.isAlphabetic
        }

        static func isIdentifierContinue(_ scalar: Unicode.Scalar) -> Bool {
            if scalar.isASCII { return scalar == "_" || isASCIILetter(scalar) || ("0"..."9").contains(scalar) }
            let properties = scalar.properties
            switch properties.generalCategory {
            case .decimalNumber, .nonspacingMark, .spacingMark: return true
            default: return properties.isAlphabetic
            }
        }

        /// Whether `text` is a single property name (used to check `%K` expansions).
        static func isIdentifier<S: StringProtocol>(_ text: S) -> Bool {
            guard let first = text.unicodeScalars.first, isIdentifierStart(first) else { return false }
            return text.unicodeScalars.dropFirst().allSatisfy(isIdentifierContinue)
        }

        private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
        }

        private func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

        private func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: return byte - 0x30
            case 0x41...0x46: return byte - 0x41 + 10
            case 0x61...0x66: return byte - 0x61 + 10
            default: return nil
            }
        }

        private mutating func skipWhitespace() {
            while offset < bytes.count {
                let (scalar, width) = scalar(at: offset)
                guard scalar.properties.isWhitespace else { return }
                offset += width
            }
        }

        private mutating func skipIdentifierCharacters() {
            offset += scalar(at: offset).width
            while offset < bytes.count {
                let (scalar, width) = scalar(at: offset)
                guard Lexer.isIdentifierContinue(scalar) else { return }
                offset += width
            }
        }

        /// How to show the character at `index` (or the end) in an error message.
        func describeCharacter(at index: Int) -> String {
            guard index < bytes.count else { return "end of input" }
            let scalar = scalar(at: index).scalar
            return scalar.properties.isWhitespace || scalar.value < 0x20
                ? "'\(scalar.escaped(asASCII: true))'" : "'\(scalar)'"
        }

        private func unexpectedCharacter(at index: Int) -> QueryError {
            QueryError(position: index, reason: "unexpected character \(describeCharacter(at: index))")
        }

        // MARK: Token kinds

        /// `$name` or `@name`, returned with its prefix.
        private mutating func lexPrefixedName(what: String) throws(QueryError) -> String {
            let start = offset
            offset += 1
            guard offset < bytes.count, Lexer.isIdentifierStart(scalar(at: offset).scalar) else {
                throw QueryError(position: offset, reason:
                    "expected \(what) after '\(text(start..<start + 1))' but found \(describeCharacter(at: offset))")
            }
            skipIdentifierCharacters()
            return text(start..<offset)
        }

        private mutating func lexOperator() throws(QueryError) -> String {
            for two in ["==", "=<", "=>", "<=", "<>", ">=", "!=", "&&", "||"]
            where bytes[offset...].starts(with: two.utf8) {
                offset += 2
                return two
            }
            let single = text(offset..<offset + 1)
            guard single != "&", single != "|" else {
                throw QueryError(position: offset, reason: "expected '\(single)\(single)' but found a single '\(single)'")
            }
            offset += 1
            return single
        }

        /// `%@` and `%K`; other printf-style specifiers (`%d`, `%lld`, `%s`, …) act as `%@`, as in NSPredicate.
        private mutating func lexPlaceholder() throws(QueryError) -> Token.Kind {
            let start = offset
            let index = placeholderCount
            var end = start + 1
            var isKeyPath = false
            if end < bytes.count, bytes[end] == UInt8(ascii: "@") || bytes[end] == UInt8(ascii: "K") {
                isKeyPath = bytes[end] == UInt8(ascii: "K")
                end += 1
            } else {
                while end < bytes.count, "hlqLzjt".utf8.contains(bytes[end]) { end += 1 }
                guard end < bytes.count, "dDiuUoOxXfFeEgGaAcCsSp".utf8.contains(bytes[end]) else {
                    let next = start + 1
                    guard next < bytes.count, Lexer.isASCIILetter(Unicode.Scalar(bytes[next])) else {
                        throw QueryError(position: start, reason:
                            "a lone '%' must be followed by @ or K (%@, %K) but found \(describeCharacter(at: next))")
                    }
                    throw QueryError(position: start, reason:
                        "unknown format specifier '\(text(start..<min(end + 1, bytes.count)))'; expected %@ or %K")
                }
                end += 1
            }
            offset = end
            placeholderCount += 1
            return isKeyPath ? .keyPathArgument(index) : .argument(index)
        }

        /// `[c]`, `[d]`, `[cd]` or `[dc]`, in either case.
        private mutating func lexModifier() throws(QueryError) -> StringOptions {
            let start = offset
            var end = start + 1
            while end < bytes.count, Lexer.isASCIILetter(Unicode.Scalar(bytes[end])) { end += 1 }
            guard end < bytes.count, bytes[end] == UInt8(ascii: "]") else {
                throw QueryError(position: end, reason:
                    "expected ']' to close the modifier '[' at offset \(start) but found \(describeCharacter(at: end))")
            }
            guard end > start + 1 else {
                throw QueryError(position: start, reason: "empty modifier '[]'; expected [c], [d] or [cd]")
            }
            var options: StringOptions = []
            for index in start + 1..<end {
                switch bytes[index] | 0x20 {
                case UInt8(ascii: "c"): options.insert(.caseInsensitive)
                case UInt8(ascii: "d"): options.insert(.diacriticInsensitive)
                default:
                    throw QueryError(position: index, reason:
                        "unknown modifier letter '\(text(index..<index + 1))' in '\(text(start..<end + 1))'; expected c or d")
                }
            }
            offset = end + 1
            return options
        }

        /// Integers (decimal or 0x hexadecimal, optionally signed) and doubles (with '.' or an exponent).
        private mutating func lexNumber() throws(QueryError) -> Token.Kind {
            let start = offset
            var index = start
            let negative = bytes[index] == UInt8(ascii: "-")
            if !isDigit(bytes[index]) { index += 1 }
            var magnitude: UInt64 = 0
            var overflowed = false
            var isDouble = false
            let isHex = index + 1 < bytes.count && bytes[index] == UInt8(ascii: "0") && bytes[index + 1] | 0x20 == UInt8(ascii: "x")
            if isHex {
                index += 2
                let digitsStart = index
                while index < bytes.count, let digit = hexValue(bytes[index]) {
                    accumulate(&magnitude, times: 16, plus: digit, overflowed: &overflowed)
                    index += 1
                }
                guard index > digitsStart else {
                    throw QueryError(position: start, reason: "expected hexadecimal digits after '0x' in '\(malformedText(from: start))'")
                }
            } else {
                while index < bytes.count, isDigit(bytes[index]) {
                    accumulate(&magnitude, times: 10, plus: bytes[index] - 0x30, overflowed: &overflowed)
                    index += 1
                }
                if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "."), isDigit(bytes[index + 1]) {
                    isDouble = true
                    index += 1
                    while index < bytes.count, isDigit(bytes[index]) { index += 1 }
                }
                if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
                    var exponent = index + 1
                    if exponent < bytes.count, bytes[exponent] == UInt8(ascii: "+") || bytes[exponent] == UInt8(ascii: "-") {
                        exponent += 1
                    }
                    if exponent < bytes.count, isDigit(bytes[exponent]) {
                        isDouble = true
                        index = exponent
                        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
                    }
                }
            }
            // "5abc" or "1e" is a typo, not the number 5 followed by a name.
            if index < bytes.count, Lexer.isIdentifierContinue(scalar(at: index).scalar) {
                throw QueryError(position: start, reason: "malformed number '\(malformedText(from: start))'")
            }
            offset = index
            let written = text(start..<index)
            if isDouble {
                guard let value = Double(written), value.isFinite else {
                    throw QueryError(position: start, reason: "number \(written) is out of range for a Double")
                }
                return .double(value)
            }
            let limit = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
            guard !overflowed, magnitude <= limit else {
                throw QueryError(position: start, reason: "integer \(written) is out of range for a 64-bit integer")
            }
            // Int64(bitPattern:) is safe: magnitude ≤ 2^63, and negating 2^63 as a bit pattern is Int64.min.
            return .integer(negative ? Int64(bitPattern: 0 &- magnitude) : Int64(magnitude))
        }

        private func accumulate(_ value: inout UInt64, times base: UInt64, plus digit: UInt8, overflowed: inout Bool) {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: base)
            let (sum, overflow2) = shifted.addingReportingOverflow(UInt64(digit))
            overflowed = overflowed || overflow1 || overflow2
            value = sum
        }

        /// The number-like run starting at `start`, for error messages.
        private func malformedText(from start: Int) -> String {
            var end = start + 1
            while end < bytes.count {
                let (scalar, width) = scalar(at: end)
                guard Lexer.isIdentifierContinue(scalar) || scalar == "." else { break }
                end += width
            }
            return text(start..<end)
        }

        /// A string in single or double quotes, with backslash escapes.
        private mutating func lexString() throws(QueryError) -> String {
            let start = offset
            let quote = bytes[start]
            var content: [UInt8] = []
            var index = start + 1
            let unterminated = QueryError(position: start, reason: "unterminated string starting at offset \(start)")
            while true {
                guard index < bytes.count else { throw unterminated }
                let byte = bytes[index]
                if byte == quote { break }
                guard byte == UInt8(ascii: "\\") else {
                    content.append(byte)
                    index += 1
                    continue
                }
                guard index + 1 < bytes.count else { throw unterminated }
                switch Unicode.Scalar(bytes[index + 1]) {
                case "\\", "'", "\"": content.append(bytes[index + 1])
                case "n": content.append(0x0A)
                case "t": content.append(0x09)
                case "r": content.append(0x0D)
                case "0": content.append(0x00)
                case "u":
                    let (scalar, end) = try lexUnicodeEscape(at: index)
                    UTF8.encode(scalar) { content.append($0) }
                    index = end
                    continue
                default:
                    throw QueryError(position: index, reason: "unknown escape '\\\(scalar(at: index + 1).scalar)' in string; "
                        + "expected \\\\, \\', \\\", \\n, \\t, \\r, \\0 or \\u")
                }
                index += 2
            }
            offset = index + 1
            return String(decoding: content, as: UTF8.self)
        }

        /// `\u{1F600}` (1–8 hex digits) or `\uXXXX`, where a UTF-16 surrogate pair `\uD83D\uDE00` makes one
        /// character. Returns the character and the offset just after the escape.
        private func lexUnicodeEscape(at backslash: Int) throws(QueryError) -> (Unicode.Scalar, Int) {
            let invalid = { (detail: String) in
                QueryError(position: backslash, reason: "invalid unicode escape in string: \(detail)")
            }
            var value: UInt32 = 0
            var index = backslash + 2
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                let digitsStart = index
                while index < bytes.count, index - digitsStart < 8, let digit = hexValue(bytes[index]) {
                    value = value << 4 | UInt32(digit)
                    index += 1
                }
                guard index > digitsStart, index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw invalid("expected 1 to 8 hexadecimal digits and '}' after '\\u{'")
                }
                index += 1
            } else {
                guard let high = fourHexDigits(at: index) else { throw invalid("expected four hexadecimal digits after '\\u'") }
                value = high
                index += 4
                if (0xD800...0xDBFF).contains(high), bytes[index...].starts(with: "\\u".utf8),
                   let low = fourHexDigits(at: index + 2), (0xDC00...0xDFFF).contains(low) {
                    value = 0x10000 + (high - 0xD800) << 10 + (low - 0xDC00)
                    index += 6
                }
            }
            guard let scalar = Unicode.Scalar(value) else {
                throw invalid("U+\(String(value, radix: 16, uppercase: true)) is not a valid character")
            }
            return (scalar, index)
        }

        private func fourHexDigits(at index: Int) -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[index..<index + 4] {
                guard let digit = hexValue(byte) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
    }
}

// MARK: - Parser

extension PredicateParser {
    /// A subtree and how deep it is, so that `maximumDepth` can be enforced without walking the tree.
    fileprivate struct Subtree {
        var node: PredicateNode
        var depth: Int
    }

    /// One `.`-separated part of a key path, before the parts are sorted into components and aggregate.
    fileprivate struct KeyPathPart {
        enum Kind { case name, variable, aggregate }
        var kind: Kind
        var text: String
        var position: Int
    }

    fileprivate struct Parser {
        private var lexer: Lexer
        private var token: Token
        private let arguments: [Any]
        private var nesting = 0

        init(format: String, arguments: [Any]) throws(QueryError) {
            lexer = Lexer(format)
            self.arguments = arguments
            token = Token(kind: .end, start: 0, end: 0)
            token = try lexer.next()
        }

        mutating func parseWholePredicate() throws(QueryError) -> PredicateNode {
            let result = try parseDisjunction()
            guard token.kind == .end else { throw unexpected("AND, OR or the end of the predicate") }
            return result.node
        }

        // MARK: Helpers

        private mutating func advance() throws(QueryError) {
            token = try lexer.next()
        }

        /// The token as written, quoted and shortened for an error message.
        private func describe(_ token: Token) -> String {
            guard token.kind != .end else { return "end of input" }
            var written = lexer.text(token.start..<token.end)
            if written.count > 40 { written = written.prefix(40) + "…" }
            // A string already shows its own quotes.
            if case .string = token.kind { return "the string \(written)" }
            return "'\(written)'"
        }

        private func unexpected(_ expectation: String) -> QueryError {
            QueryError(position: token.start, reason: "expected \(expectation) but found \(describe(token))")
        }

        private mutating func expectSymbol(_ symbol: String, _ expectation: String) throws(QueryError) {
            guard token.isSymbol(symbol) else { throw unexpected(expectation) }
            try advance()
        }

        private func join(_ node: PredicateNode, depth: Int, at position: Int) throws(QueryError) -> Subtree {
            guard depth <= PredicateParser.maximumDepth else {
                throw QueryError(position: position, reason: "the predicate is nested too deeply (more than "
                    + "\(PredicateParser.maximumDepth) levels of AND, OR, NOT and SUBQUERY); use IN {…} for long lists of alternatives")
            }
            return Subtree(node: node, depth: depth)
        }

        private mutating func enterNesting(at position: Int) throws(QueryError) {
            nesting += 1
            guard nesting <= PredicateParser.maximumNesting else {
                throw QueryError(position: position, reason:
                    "parentheses and SUBQUERYs nest more than \(PredicateParser.maximumNesting) levels deep")
            }
        }

        private func missingArgument(_ placeholder: String, _ index: Int, at position: Int) -> QueryError {
            let given = switch arguments.count {
            case 0: "no arguments were given"
            case 1: "only 1 argument was given"
            default: "only \(arguments.count) arguments were given"
            }
            return QueryError(position: position, reason: "\(placeholder) refers to argument \(index) but \(given)")
        }

        // MARK: Predicates

        private mutating func parseDisjunction() throws(QueryError) -> Subtree {
            var result = try parseConjunction()
            while token.isKeyword(.or) || token.isSymbol("||") {
                let position = token.start
                try advance()
                let right = try parseConjunction()
                result = try join(.or(result.node, right.node), depth: max(result.depth, right.depth) + 1, at: position)
            }
            return result
        }

        private mutating func parseConjunction() throws(QueryError) -> Subtree {
            var result = try parseNegation()
            while token.isKeyword(.and) || token.isSymbol("&&") {
                let position = token.start
                try advance()
                let right = try parseNegation()
                result = try join(.and(result.node, right.node), depth: max(result.depth, right.depth) + 1, at: position)
            }
            return result
        }

        /// NOTs are collected in a loop rather than by recursion, so a long run of them cannot
        /// exhaust the stack before the depth limit catches it.
        private mutating func parseNegation() throws(QueryError) -> Subtree {
            var positions: [Int] = []
            while token.isKeyword(.not) || token.isSymbol("!") {
                positions.append(token.start)
                try advance()
            }
            var result = try parsePrimary()
            for position in positions.reversed() {
                result = try join(.not(result.node), depth: result.depth + 1, at: position)
            }
            return result
        }

        private mutating func parsePrimary() throws(QueryError) -> Subtree {
            switch token.kind {
            case .symbol("("):
                let open = token.start
                try advance()
                try enterNesting(at: open)
                let inner = try parseDisjunction()
                try expectSymbol(")", "')' to close the '(' at offset \(open)")
                nesting -= 1
                return inner
            case .word(_, .truePredicate?), .word(_, .falsePredicate?):
                let value = token.isKeyword(.truePredicate)
                try advance()
                return Subtree(node: .constant(value), depth: 1)
            default:
                return try parseComparison()
            }
        }

        // MARK: Comparisons

        private mutating func parseComparison() throws(QueryError) -> Subtree {
            let start = token.start
            let (left, leftDepth) = try parseOperand(expecting: "a predicate")
            guard let op = comparisonOperator(token) else {
                throw unexpected("a comparison operator such as ==, <, BEGINSWITH or IN")
            }
            let spelling = describe(token)
            try advance()
            var options: StringOptions = []
            if case .modifier(let modifier) = token.kind {
                switch op {
                case .equal, .notEqual, .in, .beginsWith, .endsWith, .contains, .like:
                    options = modifier
                    try advance()
                case .less, .lessOrEqual, .greater, .greaterOrEqual, .between:
                    throw QueryError(position: token.start, reason: "the modifier \(describe(token)) only applies to "
                        + "==, !=, IN, BEGINSWITH, ENDSWITH, CONTAINS and LIKE, not to \(spelling)")
                }
            }
            let (right, rightDepth) = switch op {
            case .in: try parseMembershipSide(after: spelling)
            case .between: try parseRangeSide(after: spelling)
            default: try parseOperand(expecting: "a value after \(spelling)")
            }
            guard left.namesProperty || right.namesProperty else {
                throw QueryError(position: start, reason:
                    "at least one side of a comparison must be a key path, but both sides of \(spelling) are values")
            }
            let comparison = Comparison(left: left, op: op, right: right, options: options, position: start)
            return try join(.comparison(comparison), depth: max(leftDepth, rightDepth) + 1, at: start)
        }

        private func comparisonOperator(_ token: Token) -> ComparisonOperator? {
            switch token.kind {
            case .symbol("=="), .symbol("="): .equal
            case .symbol("!="), .symbol("<>"): .notEqual
            case .symbol("<"): .less
            case .symbol("<="), .symbol("=<"): .lessOrEqual
            case .symbol(">"): .greater
            case .symbol(">="), .symbol("=>"): .greaterOrEqual
            case .word(_, .beginsWith?): .beginsWith
            case .word(_, .endsWith?): .endsWith
            case .word(_, .contains?): .contains
            case .word(_, .like?): .like
            case .word(_, .in?): .in
            case .word(_, .between?): .between
            default: nil
            }
        }

        /// The right side of IN: a list (possibly empty), `%@`, or a key path (`'x' IN names`).
        private mutating func parseMembershipSide(after spelling: String) throws(QueryError) -> (QueryExpression, Int) {
            if token.isSymbol("{") { return (try parseList(), 0) }
            return try parseArgumentOrKeyPath(expecting: "a list {…}, %@ or a key path after \(spelling)", allowKeyPath: true)
        }

        /// The right side of BETWEEN: a list of exactly two values, or `%@`.
        private mutating func parseRangeSide(after spelling: String) throws(QueryError) -> (QueryExpression, Int) {
            guard token.isSymbol("{") else {
                return try parseArgumentOrKeyPath(expecting: "a list {low, high} or %@ after \(spelling)", allowKeyPath: false)
            }
            let list = try parseList()
            if case .list(let elements, let position) = list, elements.count != 2 {
                throw QueryError(position: position, reason:
                    "BETWEEN needs a list of exactly two values {low, high} but this list has \(elements.count)")
            }
            return (list, 0)
        }

        private mutating func parseArgumentOrKeyPath(expecting expectation: String, allowKeyPath: Bool) throws(QueryError) -> (QueryExpression, Int) {
            let first = token
            let (side, depth) = try parseOperand(expecting: expectation)
            switch side {
            case .constant(.argument): return (side, depth)
            case .keyPath where allowKeyPath: return (side, depth)
            default:
                throw QueryError(position: first.start, reason: "expected \(expectation) but found \(describe(first))")
            }
        }

        /// `{a, b, c}`: values and `%@` only.
        private mutating func parseList() throws(QueryError) -> QueryExpression {
            let open = token.start
            try advance()
            var elements: [QueryExpression] = []
            if token.isSymbol("}") {
                try advance()
                return .list(elements, position: open)
            }
            while true {
                guard let value = try literal() else { throw unexpected("a value or %@ in the list") }
                elements.append(.constant(value))
                try advance()
                if token.isSymbol(",") {
                    try advance()
                    continue
                }
                try expectSymbol("}", "',' or '}' in the list starting at offset \(open)")
                return .list(elements, position: open)
            }
        }

        // MARK: Operands

        /// One side of a comparison, and its depth (non-zero only for a subquery).
        private mutating func parseOperand(expecting expectation: String) throws(QueryError) -> (QueryExpression, Int) {
            if let value = try literal() {
                try advance()
                return (.constant(value), 0)
            }
            switch token.kind {
            case .word(_, .anyQuantifier?), .word(_, .someQuantifier?), .word(_, .allQuantifier?), .word(_, .noneQuantifier?):
                let quantifier: Quantifier =
                    token.isKeyword(.allQuantifier) ? .all : token.isKeyword(.noneQuantifier) ? .none : .any
                let spelling = describe(token)
                try advance()
                guard token.startsKeyPath else { throw unexpected("a key path after \(spelling)") }
                return (.keyPath(try parseKeyPath(quantifier: quantifier)), 0)
            case .word(_, .subquery?):
                return try parseSubquery()
            case .word(_, nil), .variable, .keyPathArgument:
                return (.keyPath(try parseKeyPath(quantifier: nil)), 0)
            case .aggregate:
                throw QueryError(position: token.start, reason: "a key path cannot start with an aggregate such as \(describe(token))")
            case .symbol("{"):
                throw QueryError(position: token.start, reason: "a list {…} can only follow IN or BETWEEN")
            default:
                throw unexpected(expectation)
            }
        }

        /// The constant the current token spells, if it is one (not consumed).
        private func literal() throws(QueryError) -> QueryConstant? {
            switch token.kind {
            case .integer(let value): return .int(value)
            case .double(let value): return .double(value)
            case .string(let value): return .string(value)
            case .argument(let index):
                guard index < arguments.count else {
                    throw missingArgument(lexer.text(token.start..<token.end), index, at: token.start)
                }
                return .argument(index)
            case .word(_, .nilValue?), .word(_, .nullValue?): return .null
            case .word(_, .trueValue?), .word(_, .yesValue?): return .bool(true)
            case .word(_, .falseValue?), .word(_, .noValue?): return .bool(false)
            default: return nil
            }
        }

        /// A key path starting at the current token, which `startsKeyPath`. Its position is that of its
        /// first part, after any quantifier (the comparison's position covers the quantifier).
        private mutating func parseKeyPath(quantifier: Quantifier?) throws(QueryError) -> KeyPathExpression {
            let position = token.start
            var parts: [KeyPathPart] = []
            while true {
                switch token.kind {
                // After a '.', keywords are ordinary names: nothing else can follow a dot.
                case .word(let name, _): parts.append(KeyPathPart(kind: .name, text: name, position: token.start))
                case .variable(let name): parts.append(KeyPathPart(kind: .variable, text: name, position: token.start))
                case .aggregate(let name): parts.append(KeyPathPart(kind: .aggregate, text: name, position: token.start))
                case .keyPathArgument(let index): parts += try expandKeyPathArgument(index, at: token.start)
                default: throw unexpected("a property name after '.'")
                }
                try advance()
                guard token.isSymbol(".") else { break }
                try advance()
            }
            return try assembleKeyPath(parts, quantifier: quantifier, position: position)
        }

        /// The parts of the key path a `%K` argument holds; all of them point at the `%K`.
        private func expandKeyPathArgument(_ index: Int, at position: Int) throws(QueryError) -> [KeyPathPart] {
            guard index < arguments.count else { throw missingArgument("%K", index, at: position) }
            guard let path = arguments[index] as? String else {
                throw QueryError(position: position, reason:
                    "%K argument \(index) is not a String but \(type(of: arguments[index])); %K needs a key path such as \"dog.age\"")
            }
            var parts: [KeyPathPart] = []
            for piece in path.split(separator: ".", omittingEmptySubsequences: false) {
                let kind: KeyPathPart.Kind = piece.hasPrefix("$") ? .variable : piece.hasPrefix("@") ? .aggregate : .name
                guard Lexer.isIdentifier(kind == .name ? piece : piece.dropFirst()) else {
                    throw QueryError(position: position, reason:
                        "%K argument \(index) holds \"\(path)\", which is not a key path (property names joined by '.')")
                }
                parts.append(KeyPathPart(kind: kind, text: String(piece), position: position))
            }
            return parts
        }

        /// Sorts the parts into components, aggregate and aggregate property, checking their order.
        private func assembleKeyPath(_ parts: [KeyPathPart], quantifier: Quantifier?, position: Int) throws(QueryError) -> KeyPathExpression {
            var path = KeyPathExpression(quantifier: quantifier, components: [], aggregate: nil, position: position)
            for (index, part) in parts.enumerated() {
                switch part.kind {
                case .variable:
                    guard index == 0 else {
                        throw QueryError(position: part.position, reason:
                            "a subquery variable such as '\(part.text)' can only start a key path")
                    }
                    path.components.append(part.text)
                case .aggregate:
                    guard index > 0 else {
                        throw QueryError(position: part.position, reason:
                            "a key path cannot start with an aggregate such as '\(part.text)'")
                    }
                    if let aggregate = path.aggregate {
                        throw QueryError(position: part.position, reason:
                            "only property names may follow '\(aggregate.rawValue)' in a key path, but found '\(part.text)'")
                    }
                    guard let aggregate = Aggregate(rawValue: asciiCaseFolded(part.text, upper: false)) else {
                        throw QueryError(position: part.position, reason:
                            "unknown aggregate '\(part.text)'; expected @count, @sum, @avg, @min or @max")
                    }
                    path.aggregate = aggregate
                case .name:
                    if path.aggregate == nil {
                        path.components.append(part.text)
                    } else {
                        path.aggregateProperty.append(part.text)
                    }
                }
            }
            return path
        }

        /// `SUBQUERY(collection, $x, predicate).@count`.
        private mutating func parseSubquery() throws(QueryError) -> (QueryExpression, Int) {
            let start = token.start
            try advance()
            try expectSymbol("(", "'(' after SUBQUERY")
            try enterNesting(at: start)
            guard token.startsKeyPath else { throw unexpected("a collection key path after 'SUBQUERY('") }
            let collection = try parseKeyPath(quantifier: nil)
            try expectSymbol(",", "',' after the SUBQUERY collection")
            guard case .variable(let variable) = token.kind else {
                throw unexpected("a subquery variable starting with '$' (such as $x)")
            }
            try advance()
            try expectSymbol(",", "',' after the subquery variable")
            let predicate = try parseDisjunction()
            try expectSymbol(")", "')' to close the SUBQUERY at offset \(start)")
            nesting -= 1
            try expectSymbol(".", "'.@count' after SUBQUERY(…)")
            guard case .aggregate(let name) = token.kind else { throw unexpected("'@count' after 'SUBQUERY(…).'") }
            guard asciiCaseFolded(name, upper: false) == Aggregate.count.rawValue else {
                throw QueryError(position: token.start, reason: "only @count can follow a SUBQUERY, but found '\(name)'")
            }
            try advance()
            let expression = QueryExpression.subqueryCount(
                collection: collection, variable: variable, predicate: predicate.node, position: start)
            return (expression, predicate.depth + 1)
        }
    }
}

extension QueryExpression {
    /// Whether this side names something in the database (so the comparison is not between two constants).
    fileprivate var namesProperty: Bool {
        switch self {
        case .keyPath, .subqueryCount: true
        case .constant, .list: false
        }
    }
}
