import Foundation

// A Decimal128 is an IEEE 754-2008 decimal128 in the binary integer decimal (BID) encoding,
// the same 16 bytes Realm and BSON store. A finite value is (-1)^sign × coefficient × 10^q
// with a coefficient of at most 34 decimal digits and q in -6176...6111.
//
//   bits     width  field (bit 127 is the top bit of `high`, bit 0 the bottom bit of `low`)
//   -------  -----  ---------------------------------------------------------------------
//   127      1      sign
//   126–113  14     biased exponent q + 6176, when bits 126–125 are not 11
//   112–0    113    coefficient, when bits 126–125 are not 11; above 10^34 - 1 it is
//                   non-canonical and reads as zero
//   126–122  5      11110: infinity; 11111: NaN (the rest of the bits are ignored)
//   121      1      for a NaN, 1 makes it signalling
//   126–125  2      11 followed by anything else: the "large coefficient" form, whose
//                   coefficient is at least 2^113 > 10^34 - 1, so it always reads as zero
//                   (with the exponent in bits 124–111)
//
// The same value has several encodings (1, 1.0 and 1.00 are 1E0, 10E-1, 100E-2): equality,
// ordering and hashing compare numeric values; `stringValue` keeps the exponent, as the
// IEEE "to-scientific-string" conversion does.
//
// Arithmetic works on the coefficient as an exact integer (a 256-bit `WideCoefficient` holds
// every intermediate product and scaled operand) and rounds once, half to even, in
// `rounded(negative:coefficient:exponent:)`. Where an intermediate value has to be cut short
// (an addend far below the other, a quotient that does not terminate, a string with more
// digits than fit) it is replaced by the truncated value times ten plus one: the extra 1
// marks "some nonzero tail" and, because at least two digits are rounded away afterwards,
// it lands on the same side of every rounding boundary as the true value.

/// A 128-bit IEEE 754-2008 decimal floating-point number: up to 34 significant digits and an
/// exponent from -6143 to 6144, exact for decimal fractions such as 0.1.
///
/// Arithmetic is exact when the result fits in 34 digits and otherwise rounds half to even;
/// results too large overflow to infinity.
///
/// ```swift
/// let price: Decimal128 = "19.99"
/// let total = price * 3            // 59.97, exactly
/// let tenth = Decimal128(0.1)      // 0.1, not 0.1000000000000000055511151231257827
/// ```
///
/// Equality and hashing compare numeric values, so `1.0 == 1` and -0 == 0. Unlike IEEE
/// comparison, every NaN equals every other NaN (so a NaN can be found in a set or used as a
/// dictionary key), and ordering is total: NaN < -infinity < finite values < +infinity.
public struct Decimal128: Sendable {
    /// The low 64 bits of the BID encoding (the bottom of the coefficient).
    public let low: UInt64
    /// The high 64 bits of the BID encoding: sign, combination field and exponent, and the
    /// top 49 bits of the coefficient.
    public let high: UInt64

    /// The decimal whose raw BID bits are `high` (bits 127–64) and `low` (bits 63–0).
    ///
    /// Every bit pattern is accepted; non-canonical ones read as zero, as the standard says.
    ///
    /// ```swift
    /// let one = Decimal128(low: 1, high: 0x3040_0000_0000_0000)   // 1
    /// ```
    public init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// Zero (0E0).
    public init() { self.init(low: 0, high: 0x3040_0000_0000_0000) }

    /// The 16 bytes of the encoding, least significant first (the BSON byte order).
    public var bytes: [UInt8] {
        withUnsafeBytes(of: low.littleEndian, Array.init) + withUnsafeBytes(of: high.littleEndian, Array.init)
    }

    /// The decimal encoded by `bytes` (exactly 16, least significant first).
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        let word = { (start: Int) in bytes[start..<start + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        self.init(low: word(0), high: word(8))
    }

    // MARK: Format constants

    private static let exponentBias = 6176
    private static let minExponent = -6176
    private static let maxExponent = 6111
    private static let maxDigits = 34
    private static let maxCoefficient: UInt128 = powerOfTen(34) - 1
    private static let signBit: UInt128 = 1 << 127
    private static let infinityBits: UInt128 = 0x7800_0000_0000_0000 << 64
    private static let quietNaNBits: UInt128 = 0x7C00_0000_0000_0000 << 64

    private var bits: UInt128 { UInt128(high) << 64 | UInt128(low) }

    private init(bits: UInt128) {
        self.init(low: UInt64(truncatingIfNeeded: bits), high: UInt64(truncatingIfNeeded: bits >> 64))
    }

    /// A canonical finite encoding; the caller guarantees the ranges.
    private init(negative: Bool, coefficient: UInt128, exponent: Int) {
        assert(coefficient <= Self.maxCoefficient && (Self.minExponent...Self.maxExponent).contains(exponent))
        let sign = negative ? Self.signBit : 0
        self.init(bits: sign | UInt128(exponent + Self.exponentBias) << 113 | coefficient)
    }

    /// What the bits encode.
    private enum Unpacked {
        case finite(negative: Bool, coefficient: UInt128, exponent: Int)
        case infinity(negative: Bool)
        case nan
    }

    private var unpacked: Unpacked {
        let negative = high >> 63 == 1
        if bits >> 125 & 0b11 == 0b11 {
            switch bits >> 122 & 0b11111 {
            case 0b11110: return .infinity(negative: negative)
            case 0b11111: return .nan
            default:
                // The large-coefficient form: its coefficient is 0b100 followed by 111 bits,
                // at least 2^113, never canonical, so the value is zero.
                let exponent = Int(bits >> 111 & 0x3FFF) - Self.exponentBias
                return .finite(negative: negative, coefficient: 0, exponent: Swift.min(exponent, Self.maxExponent))
            }
        }
        let coefficient = bits & (UInt128(1) << 113 - 1)
        let exponent = Int(bits >> 113 & 0x3FFF) - Self.exponentBias
        return .finite(negative: negative, coefficient: coefficient <= Self.maxCoefficient ? coefficient : 0, exponent: exponent)
    }
}

// MARK: - Creating decimals

extension Decimal128 {
    /// Parses a decimal number: an optional sign, digits with an optional decimal point, and
    /// an optional exponent (`e` or `E`, optionally signed); or `NaN`, `Inf` or `Infinity` in
    /// any case, optionally signed.
    ///
    /// The exponent is kept: `"1.50"` parses to 150E-2, which prints as "1.50". More than 34
    /// significant digits round half to even; values beyond ±9.999…E+6144 become infinity;
    /// values below 1E-6176 lose digits and may become zero, as IEEE 754 converts.
    ///
    /// ```swift
    /// let d = try Decimal128(string: "-1.25e3")   // -1.25E+3
    /// ```
    ///
    /// - Throws: `Realm.Error` (`invalidArgument`) when `string` is not a decimal number.
    public init(string: String) throws {
        guard let value = Self.parse(Array(string.utf8)) else {
            throw Realm.Error(.invalidArgument, "\"\(string)\" is not a decimal number; write digits with an optional sign, decimal point and exponent (\"-1.25E+3\"), or NaN or Infinity")
        }
        self = value
    }

    /// The integer `int`, exactly.
    public init(_ int: Int64) {
        self = Self.rounded(negative: int < 0, coefficient: WideCoefficient(UInt128(int.magnitude)), exponent: 0)
    }

    /// The decimal nearest the shortest decimal string that reads back as `double`, so
    /// `Decimal128(0.1)` is exactly 0.1 (as Realm converts), not the binary value
    /// 0.1000000000000000055511151231257827….
    public init(_ double: Double) {
        self.init(shortestDescription: double.description)
    }

    /// Converts `value`, rounding to 34 significant digits when it has more.
    ///
    /// Accepts any integer type, `Double`, `Float`, `String` (parsed as by
    /// ``init(string:)``), `Decimal`, `NSNumber` and `Decimal128`. Anything else, and a string
    /// that is not a decimal number, gives NaN rather than trapping.
    public init(value: Any) {
        switch value {
        case let decimal as Decimal128: self = decimal
        case let int as any BinaryInteger: self.init(integer: int)
        case let double as Double: self.init(double)
        case let float as Float: self.init(shortestDescription: float.description)
        case let string as String: self = (try? Decimal128(string: string)) ?? .nan
        case let decimal as Decimal: self = (try? Decimal128(string: decimal.description)) ?? .nan
        case let number as NSNumber: self.init(number: number)
        default: self = .nan
        }
    }

    /// Converts `number`: integers exactly, floating-point numbers through their shortest
    /// decimal string (as ``init(_:)-(Double)`` does), booleans as 0 or 1.
    public init(number: NSNumber) {
        switch String(cString: number.objCType) {
        case "d": self.init(number.doubleValue)
        case "f": self.init(shortestDescription: number.floatValue.description)
        case "Q": self.init(integer: number.uint64Value)
        default: self.init(number.int64Value)
        }
    }

    /// Creates the decimal equal to `source`, or nil when that needs more than 34 digits
    /// (trailing zeros go into the exponent, so 10^40 is exact).
    public init?<T: BinaryInteger>(exactly source: T) {
        var significant = source.magnitude
        while significant != 0, significant % 10 == 0 { significant /= 10 }
        guard let small = UInt128(exactly: significant), small <= Self.maxCoefficient else { return nil }
        self.init(integer: source)
    }

    /// Any integer, rounded to 34 digits when it has more.
    private init<T: BinaryInteger>(integer: T) {
        if let magnitude = UInt128(exactly: integer.magnitude) {
            self = Self.rounded(negative: integer < 0, coefficient: WideCoefficient(magnitude), exponent: 0)
        } else {
            // Wider than 128 bits: go through the digits.
            self = Self.parse(Array(String(integer).utf8)) ?? .nan
        }
    }

    /// Parses Swift's shortest round-trip description of a `Double` or `Float`, dropping the
    /// ".0" it gives whole numbers so that 1.0 converts to 1 rather than 1.0.
    private init(shortestDescription text: String) {
        let digits = text.hasSuffix(".0") ? text.dropLast(2) : Substring(text)
        self = Self.parse(Array(digits.utf8)) ?? .nan
    }

    /// A quiet NaN.
    public static var nan: Decimal128 { Decimal128(bits: quietNaNBits) }
    /// Positive infinity.
    public static var infinity: Decimal128 { Decimal128(bits: infinityBits) }
    /// The largest finite value, 9.999999999999999999999999999999999E+6144.
    public static var maximumDecimalNumber: Decimal128 {
        Decimal128(negative: false, coefficient: maxCoefficient, exponent: maxExponent)
    }
    /// The most negative finite value, -9.999999999999999999999999999999999E+6144 (as
    /// `NSDecimalNumber.minimumDecimalNumber` is the most negative, not the smallest positive).
    public static var minimumDecimalNumber: Decimal128 {
        Decimal128(negative: true, coefficient: maxCoefficient, exponent: maxExponent)
    }
    /// The largest finite value (``maximumDecimalNumber``).
    public static var max: Decimal128 { maximumDecimalNumber }
    /// The most negative finite value (``minimumDecimalNumber``).
    public static var min: Decimal128 { minimumDecimalNumber }
}

// MARK: - Parsing

extension Decimal128 {
    private static func parse(_ text: [UInt8]) -> Decimal128? {
        var i = 0
        // Consumes an optional sign and answers whether it was "-".
        func takeSign() -> Bool {
            guard i < text.count, text[i] == UInt8(ascii: "+") || text[i] == UInt8(ascii: "-") else { return false }
            i += 1
            return text[i - 1] == UInt8(ascii: "-")
        }
        let negative = takeSign()
        let word = String(decoding: text[i...], as: UTF8.self).lowercased()
        if word == "nan" { return negative ? -nan : nan }
        if word == "inf" || word == "infinity" { return negative ? -infinity : infinity }

        // Keep at most `kept` significant digits; below them only "was anything nonzero"
        // matters (see the header).
        let kept = 70
        var coefficient = WideCoefficient(0)
        var significant = 0, dropped = 0, fractionDigits = 0
        var sawDigit = false, sawPoint = false, droppedNonzero = false
        while i < text.count {
            let c = text[i]
            if c == UInt8(ascii: ".") {
                if sawPoint { return nil }
                sawPoint = true
            } else if let digit = decimalDigit(c) {
                sawDigit = true
                if sawPoint { fractionDigits += 1 }
                if significant == 0 && digit == 0 {
                    // A leading zero: it only moves the decimal point.
                } else if significant < kept {
                    coefficient = coefficient.multiplied(by: 10).adding(WideCoefficient(UInt128(digit)))
                    significant += 1
                } else {
                    dropped += 1
                    droppedNonzero = droppedNonzero || digit != 0
                }
            } else {
                break
            }
            i += 1
        }
        guard sawDigit else { return nil }

        var exponent = 0
        if i < text.count, text[i] == UInt8(ascii: "e") || text[i] == UInt8(ascii: "E") {
            i += 1
            let exponentNegative = takeSign()
            guard i < text.count else { return nil }
            while i < text.count {
                guard let digit = decimalDigit(text[i]) else { return nil }
                // Saturate far beyond any exponent that could matter, so Int cannot overflow.
                exponent = Swift.min(exponent * 10 + Int(digit), 100_000_000)
                i += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        guard i == text.count else { return nil }

        exponent += dropped - fractionDigits
        if droppedNonzero {
            coefficient = coefficient.multiplied(by: 10).adding(WideCoefficient(1))
            exponent -= 1
        }
        return rounded(negative: negative, coefficient: coefficient, exponent: exponent)
    }

    private static func decimalDigit(_ c: UInt8) -> UInt8? {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) ? c - UInt8(ascii: "0") : nil
    }
}

// MARK: - Reading values

extension Decimal128 {
    /// The IEEE 754 "to-scientific-string" form, which keeps the exponent: "1", "1.0",
    /// "0.000001", "1.23E+5", "1E-7", "-0", "NaN", "Infinity", "-Infinity".
    public var stringValue: String {
        switch unpacked {
        case .nan: return "NaN"
        case .infinity(let negative): return negative ? "-Infinity" : "Infinity"
        case .finite(let negative, let coefficient, let exponent):
            let digits = Array(String(coefficient).utf8)
            let adjusted = exponent + digits.count - 1
            var out: [UInt8] = negative ? [UInt8(ascii: "-")] : []
            if exponent <= 0 && adjusted >= -6 {
                // Plain notation: the decimal point falls inside or before the digits.
                let point = digits.count + exponent
                if exponent == 0 {
                    out += digits
                } else if point > 0 {
                    out += digits[..<point] + [UInt8(ascii: ".")] + digits[point...]
                } else {
                    out += Array("0.".utf8) + Array(repeating: UInt8(ascii: "0"), count: -point) + digits
                }
            } else {
                out.append(digits[0])
                if digits.count > 1 { out += [UInt8(ascii: ".")] + digits[1...] }
                out += Array("E\(adjusted >= 0 ? "+" : "-")\(adjusted.magnitude)".utf8)
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The nearest `Double` (±infinity beyond its range, 0 below it).
    public var doubleValue: Double {
        switch unpacked {
        case .nan: return .nan
        case .infinity(let negative): return negative ? -.infinity : .infinity
        case .finite: return Double(stringValue) ?? .nan
        }
    }

    /// The value with any fraction discarded (rounded toward zero), or nil when it is NaN,
    /// infinite or outside `Int64`'s range.
    public var int64Value: Int64? {
        guard case .finite(let negative, var coefficient, let exponent) = unpacked else { return nil }
        if exponent < 0 {
            coefficient = -exponent > 38 ? 0 : coefficient / Self.powerOfTen(-exponent)
        } else if coefficient != 0 {
            // 10^19 already exceeds Int64, so larger exponents cannot fit.
            guard exponent <= 19, case (let scaled, false) = coefficient.multipliedReportingOverflow(by: Self.powerOfTen(exponent))
            else { return nil }
            coefficient = scaled
        }
        guard let signed = Int128(exactly: coefficient) else { return nil }
        return Int64(exactly: negative ? -signed : signed)
    }

    /// Whether this is a NaN, quiet or signalling.
    public var isNaN: Bool { if case .nan = unpacked { true } else { false } }
    /// Whether this is a signalling NaN (bit 121 set). Realm Swift answers `isNaN` here;
    /// OpenRealm tells quiet and signalling NaNs apart, as IEEE 754 does.
    public var isSignaling: Bool { isNaN && bits >> 121 & 1 == 1 }
    /// Whether this is a signalling NaN (the same as ``isSignaling``).
    public var isSignalingNaN: Bool { isSignaling }
    /// Whether this is positive or negative infinity.
    public var isInfinite: Bool { if case .infinity = unpacked { true } else { false } }
    /// Whether this is finite (neither infinite nor NaN).
    public var isFinite: Bool { if case .finite = unpacked { true } else { false } }
    /// Whether this is zero, of either sign and any exponent.
    public var isZero: Bool { if case .finite(_, 0, _) = unpacked { true } else { false } }
    /// The sign bit: `.minus` for negative values, -0 and -infinity.
    public var sign: FloatingPointSign { high >> 63 == 1 ? .minus : .plus }
    /// Whether the sign bit is set (so -0 is negative, as in realm-core).
    public var isNegative: Bool { sign == .minus }

    /// The absolute value (the same encoding with the sign bit cleared).
    public var magnitude: Decimal128 { Decimal128(bits: bits & ~Self.signBit) }
}

extension Decimal128: CustomStringConvertible {
    /// The ``stringValue``.
    public var description: String { stringValue }
}

// MARK: - Equality, ordering and hashing

extension Decimal128: Hashable, Comparable {
    /// Whether the two values are numerically equal: 1.0 == 1 and -0 == 0. Any NaN equals
    /// any other NaN (unlike IEEE 754), so that `Hashable` holds and NaNs can be found.
    public static func == (a: Decimal128, b: Decimal128) -> Bool { order(a, b) == 0 }

    /// A total order: NaN < -infinity < finite values (by numeric value) < +infinity.
    /// NaN sorts first, as realm-core sorts it.
    public static func < (a: Decimal128, b: Decimal128) -> Bool { order(a, b) < 0 }

    /// Hashes the numeric value: trailing zeros of the coefficient are folded into the
    /// exponent, and every zero and every NaN hashes alike.
    public func hash(into hasher: inout Hasher) {
        switch unpacked {
        case .nan:
            hasher.combine(0 as UInt8)
        case .infinity(let negative):
            hasher.combine(1 as UInt8)
            hasher.combine(negative)
        case .finite(_, 0, _):
            hasher.combine(2 as UInt8)
        case .finite(let negative, var coefficient, var exponent):
            while coefficient % 10 == 0 {
                coefficient /= 10
                exponent += 1
            }
            hasher.combine(3 as UInt8)
            hasher.combine(negative)
            hasher.combine(coefficient)
            hasher.combine(exponent)
        }
    }

    /// -1, 0 or 1 as `a` sorts before, with or after `b`.
    private static func order(_ a: Decimal128, _ b: Decimal128) -> Int {
        // Rank the classes: NaN, -infinity, finite, +infinity.
        func rank(_ d: Unpacked) -> Int {
            switch d {
            case .nan: 0
            case .infinity(let negative): negative ? 1 : 3
            case .finite: 2
            }
        }
        let (x, y) = (a.unpacked, b.unpacked)
        guard case .finite(let xNegative, let xCoefficient, let xExponent) = x,
              case .finite(let yNegative, let yCoefficient, let yExponent) = y
        else { return (rank(x) - rank(y)).signum() }

        switch (xCoefficient == 0, yCoefficient == 0) {
        case (true, true): return 0
        case (true, false): return yNegative ? 1 : -1
        case (false, true): return xNegative ? -1 : 1
        case (false, false): break
        }
        if xNegative != yNegative { return xNegative ? -1 : 1 }
        let magnitudeOrder = compareMagnitudes(xCoefficient, xExponent, yCoefficient, yExponent)
        return xNegative ? -magnitudeOrder : magnitudeOrder
    }

    /// Compares two nonzero magnitudes c × 10^e.
    private static func compareMagnitudes(_ xc: UInt128, _ xe: Int, _ yc: UInt128, _ ye: Int) -> Int {
        let xDigits = digitCount(xc), yDigits = digitCount(yc)
        // The position of the leading digit decides unless it is the same.
        let xLead = xe + xDigits - 1, yLead = ye + yDigits - 1
        if xLead != yLead { return xLead < yLead ? -1 : 1 }
        // Same leading position: scaling the one with more exponent up to the other's
        // exponent gives it no more digits than the other has, so it stays below 10^34.
        let (x, y) = xe >= ye ? (xc * powerOfTen(xe - ye), yc) : (xc, yc * powerOfTen(ye - xe))
        return x == y ? 0 : (x < y ? -1 : 1)
    }
}

// MARK: - Codable and literals

extension Decimal128: Codable {
    /// Decodes a string (parsed as by ``init(string:)``), or else an integer or a double, as
    /// Realm Swift does.
    ///
    /// - Throws: `Realm.Error` (`invalidArgument`) for a string that is not a decimal
    ///   number; `DecodingError.dataCorrupted` for any other kind of value.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            try self.init(string: string)
        } else if let int = try? container.decode(Int64.self) {
            self.init(int)
        } else if let double = try? container.decode(Double.self) {
            self.init(double)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a Decimal128 is encoded as a string or a number")
        }
    }

    /// Encodes the ``stringValue``, so no digit is lost.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

extension Decimal128: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    /// The integer `value`, exactly.
    public init(integerLiteral value: Int64) { self.init(value) }

    /// The decimal nearest the literal's shortest round-trip form (see ``init(_:)-(Double)``).
    public init(floatLiteral value: Double) { self.init(value) }

    /// Parses the literal as ``init(string:)`` does; traps when it is not a decimal number,
    /// since a literal cannot throw.
    public init(stringLiteral value: String) {
        do {
            try self.init(string: value)
        } catch {
            fatalError("Decimal128 string literal \"\(value)\" is not a decimal number; write digits with an optional sign, decimal point and exponent, or NaN or Infinity")
        }
    }
}

// MARK: - Arithmetic

extension Decimal128: SignedNumeric, Strideable {
    /// The type of `magnitude`: a `Decimal128`.
    public typealias Magnitude = Decimal128
    /// The type of the distance between two values: a `Decimal128`.
    public typealias Stride = Decimal128

    /// The sum, rounded half to even to 34 digits. NaN if either is NaN or for
    /// +infinity + -infinity.
    public static func + (a: Decimal128, b: Decimal128) -> Decimal128 { add(a, b) }
    /// The difference, rounded half to even to 34 digits.
    public static func - (a: Decimal128, b: Decimal128) -> Decimal128 { add(a, -b) }
    /// The product, rounded half to even to 34 digits. NaN for infinity × 0.
    public static func * (a: Decimal128, b: Decimal128) -> Decimal128 { multiply(a, b) }
    /// The quotient, rounded half to even to 34 digits. Dividing a nonzero value by zero
    /// gives infinity of the combined sign; 0 / 0 and infinity / infinity give NaN.
    public static func / (a: Decimal128, b: Decimal128) -> Decimal128 { divide(a, b) }

    /// Adds `b` to `a` (as `+`).
    public static func += (a: inout Decimal128, b: Decimal128) { a = a + b }
    /// Subtracts `b` from `a` (as `-`).
    public static func -= (a: inout Decimal128, b: Decimal128) { a = a - b }
    /// Multiplies `a` by `b` (as `*`).
    public static func *= (a: inout Decimal128, b: Decimal128) { a = a * b }
    /// Divides `a` by `b` (as `/`).
    public static func /= (a: inout Decimal128, b: Decimal128) { a = a / b }
    /// The value with its sign bit flipped (so -0 and 0 swap, and 0 - x differs from -x
    /// only for zeros).
    public static prefix func - (a: Decimal128) -> Decimal128 { Decimal128(bits: a.bits ^ signBit) }

    /// Flips the sign (as prefix `-`).
    public mutating func negate() { self = -self }
    /// `other - self`.
    public func distance(to other: Decimal128) -> Decimal128 { other - self }
    /// `self + n`.
    public func advanced(by n: Decimal128) -> Decimal128 { self + n }

    private static func add(_ a: Decimal128, _ b: Decimal128) -> Decimal128 {
        switch (a.unpacked, b.unpacked) {
        case (.nan, _), (_, .nan):
            return .nan
        case (.infinity(let x), .infinity(let y)):
            return x == y ? a : .nan
        case (.infinity, _):
            return a
        case (_, .infinity):
            return b
        case (.finite(let an, let ac, let ae), .finite(let bn, let bc, let be)):
            if ac == 0 && bc == 0 {
                // Round half to even: the sum of zeros is -0 only when both are -0.
                return Decimal128(negative: an && bn, coefficient: 0, exponent: Swift.min(ae, be))
            }
            if ac == 0 { return rescaledToward(Swift.min(ae, be), negative: bn, coefficient: bc, exponent: be) }
            if bc == 0 { return rescaledToward(Swift.min(ae, be), negative: an, coefficient: ac, exponent: ae) }

            // Let x be the operand with the larger exponent.
            let ((xn, xc, xe), (yn, yc, ye)) = ae >= be ? ((an, ac, ae), (bn, bc, be)) : ((bn, bc, be), (an, ac, ae))
            let gap = xe - ye
            let x: WideCoefficient, y: WideCoefficient, exponent: Int
            if gap <= 38 {
                // Align exactly: x × 10^gap < 10^72 fits in 256 bits.
                x = WideCoefficient(xc).multiplied(by: powerOfTen(gap))
                y = WideCoefficient(yc)
                exponent = ye
            } else {
                // x is at least 10^39 units of 10^(xe - 39); y is below 10^34 of those, so
                // at least five digits are rounded away and y only needs its digits down
                // to that unit plus the sticky 1 (see the header).
                x = WideCoefficient(xc).multiplied(by: powerOfTen(38)).multiplied(by: 10)
                let shift = gap - 38
                let (kept, tail) = shift > 34 ? (UInt128(0), yc) : yc.quotientAndRemainder(dividingBy: powerOfTen(shift))
                y = WideCoefficient(kept * 10 + (tail == 0 ? 0 : 1))
                exponent = xe - 39
            }
            if xn == yn {
                return rounded(negative: xn, coefficient: x.adding(y), exponent: exponent)
            }
            switch x.compare(y) {
            case 0: return Decimal128(negative: false, coefficient: 0, exponent: Swift.max(exponent, minExponent))
            case 1: return rounded(negative: xn, coefficient: x.subtracting(y), exponent: exponent)
            default: return rounded(negative: yn, coefficient: y.subtracting(x), exponent: exponent)
            }
        }
    }

    /// A nonzero value moved as close to exponent `target` as 34 digits allow (the IEEE
    /// preferred exponent of x + 0 is the smaller of the two exponents).
    private static func rescaledToward(_ target: Int, negative: Bool, coefficient: UInt128, exponent: Int) -> Decimal128 {
        let shift = Swift.min(exponent - target, maxDigits - digitCount(coefficient))
        return Decimal128(negative: negative, coefficient: coefficient * powerOfTen(shift), exponent: exponent - shift)
    }

    private static func multiply(_ a: Decimal128, _ b: Decimal128) -> Decimal128 {
        let negative = a.isNegative != b.isNegative
        switch (a.unpacked, b.unpacked) {
        case (.nan, _), (_, .nan):
            return .nan
        case (.infinity, .finite(_, 0, _)), (.finite(_, 0, _), .infinity):
            return .nan
        case (.infinity, _), (_, .infinity):
            return negative ? -infinity : infinity
        case (.finite(_, let ac, let ae), .finite(_, let bc, let be)):
            let product = ac.multipliedFullWidth(by: bc)
            return rounded(negative: negative, coefficient: WideCoefficient(high: product.high, low: product.low), exponent: ae + be)
        }
    }

    private static func divide(_ a: Decimal128, _ b: Decimal128) -> Decimal128 {
        let negative = a.isNegative != b.isNegative
        switch (a.unpacked, b.unpacked) {
        case (.nan, _), (_, .nan), (.infinity, .infinity), (.finite(_, 0, _), .finite(_, 0, _)):
            return .nan
        case (.infinity, _), (_, .finite(_, 0, _)):
            return negative ? -infinity : infinity
        case (_, .infinity):
            return Decimal128(negative: negative, coefficient: 0, exponent: minExponent)
        case (.finite(_, let ac, let ae), .finite(_, let bc, let be)):
            let ideal = ae - be
            if ac == 0 { return rounded(negative: negative, coefficient: WideCoefficient(0), exponent: ideal) }
            // Scale the dividend so the quotient has 35 or 36 digits: one more than fits,
            // at most 69 digits in the dividend.
            let scale = 35 + digitCount(bc) - digitCount(ac)
            let dividend = WideCoefficient(ac).multiplied(by: powerOfTen(scale / 2)).multiplied(by: powerOfTen(scale - scale / 2))
            let (exactQuotient, remainder) = dividend.quotientAndRemainder(dividingBy: bc)
            var quotient = exactQuotient
            var exponent = ideal - scale
            if remainder == 0 {
                // Exact: give back the scaling zeros, up to the preferred exponent.
                while exponent < ideal {
                    let (shorter, digit) = quotient.quotientAndRemainder(dividingBy: 10)
                    guard digit == 0 else { break }
                    quotient = shorter
                    exponent += 1
                }
            } else {
                quotient = quotient.multiplied(by: 10).adding(WideCoefficient(1))
                exponent -= 1
            }
            return rounded(negative: negative, coefficient: quotient, exponent: exponent)
        }
    }
}

// MARK: - Rounding

extension Decimal128 {
    /// The decimal nearest (-1)^negative × coefficient × 10^exponent, rounding half to even
    /// to 34 digits (fewer below 1E-6143, where the exponent cannot go lower), overflowing to
    /// infinity, and padding a short coefficient with zeros when the exponent is too large.
    private static func rounded(negative: Bool, coefficient: WideCoefficient, exponent: Int) -> Decimal128 {
        var c = coefficient
        var e = exponent
        let digits = c.digitCount
        let drop = Swift.max(digits - maxDigits, minExponent - e, 0)
        if drop > digits {
            // Every digit goes, and the value is below half of the new last place.
            c = WideCoefficient(0)
            e += drop
        } else if drop > 0 {
            // Divide by 10^(drop - 1), remembering whether anything nonzero went, then by 10
            // to get the digit that decides the rounding.
            var sticky = false
            var remaining = drop - 1
            while remaining > 0 {
                let step = Swift.min(remaining, 38)
                let (q, r) = c.quotientAndRemainder(dividingBy: powerOfTen(step))
                c = q
                sticky = sticky || r != 0
                remaining -= step
            }
            let (q, digit) = c.quotientAndRemainder(dividingBy: 10)
            c = q
            if digit > 5 || (digit == 5 && (sticky || c.low & 1 == 1)) {
                c = c.adding(WideCoefficient(1))
            }
            e += drop
        }
        // At most 34 digits are left, or 10^34 when rounding carried out of 9…9.
        assert(c.high == 0)
        var small = c.low
        if small > maxCoefficient {
            small /= 10
            e += 1
        }
        if e > maxExponent {
            let pad = e - maxExponent
            if small == 0 {
                e = maxExponent
            } else if digitCount(small) + pad <= maxDigits {
                small *= powerOfTen(pad)
                e = maxExponent
            } else {
                return negative ? -infinity : infinity
            }
        }
        return Decimal128(negative: negative, coefficient: small, exponent: e)
    }

    private static let powersOfTen: [UInt128] = (0...38).map { n in (0..<n).reduce(1) { power, _ in power * 10 } }

    /// 10^n for n in 0...38 (10^39 does not fit in 128 bits).
    fileprivate static func powerOfTen(_ n: Int) -> UInt128 { powersOfTen[n] }

    /// The number of decimal digits of `value` (0 for 0).
    private static func digitCount(_ value: UInt128) -> Int { WideCoefficient(high: 0, low: value).digitCount }
}

/// An unsigned 256-bit integer, enough for the product of two coefficients (< 10^68) and
/// every scaled operand (< 10^73).
private struct WideCoefficient {
    var high: UInt128
    var low: UInt128

    init(high: UInt128, low: UInt128) { (self.high, self.low) = (high, low) }
    init(_ value: UInt128) { self.init(high: 0, low: value) }

    /// Traps on overflow past 256 bits, which the callers' bounds rule out.
    func multiplied(by m: UInt128) -> WideCoefficient {
        let lowProduct = low.multipliedFullWidth(by: m)
        return WideCoefficient(high: high * m + lowProduct.high, low: lowProduct.low)
    }

    func adding(_ other: WideCoefficient) -> WideCoefficient {
        let (sum, carry) = low.addingReportingOverflow(other.low)
        return WideCoefficient(high: high + other.high + (carry ? 1 : 0), low: sum)
    }

    /// `self - other`, where `other <= self`.
    func subtracting(_ other: WideCoefficient) -> WideCoefficient {
        let (difference, borrow) = low.subtractingReportingOverflow(other.low)
        return WideCoefficient(high: high - other.high - (borrow ? 1 : 0), low: difference)
    }

    func compare(_ other: WideCoefficient) -> Int {
        if high != other.high { return high < other.high ? -1 : 1 }
        return low == other.low ? 0 : (low < other.low ? -1 : 1)
    }

    /// Long division in two 128-bit steps; the second cannot overflow because its high half
    /// is the first remainder, which is below `d`.
    func quotientAndRemainder(dividingBy d: UInt128) -> (quotient: WideCoefficient, remainder: UInt128) {
        let (highQuotient, highRemainder) = high.quotientAndRemainder(dividingBy: d)
        let (lowQuotient, remainder) = d.dividingFullWidth((high: highRemainder, low: low))
        return (WideCoefficient(high: highQuotient, low: lowQuotient), remainder)
    }

    var digitCount: Int {
        var count = 0
        var rest = self
        // Strip 38 digits at a time while the value needs the high half.
        while rest.high != 0 {
            rest = rest.quotientAndRemainder(dividingBy: Decimal128.powerOfTen(38)).quotient
            count += 38
        }
        var value = rest.low
        while value != 0 {
            value /= 10
            count += 1
        }
        return count
    }
}
