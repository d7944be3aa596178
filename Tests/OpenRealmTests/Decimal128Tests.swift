import Foundation
import Testing
import TestSupport
@testable import OpenRealm

// Expected strings and bit patterns were computed independently: the bits from the
// IEEE 754-2008 BID layout (and the BSON corpus), the arithmetic results with Python's
// `decimal` module in the decimal128 context (34 digits, Emax 6144, Emin -6143, clamped,
// round half even).

@Suite(.childProcesses) struct Decimal128Tests {
    // MARK: Strings

    @Test(arguments: [
        "0", "-0", "1", "-1", "0.1", "1.23E+5", "1E+3", "0E+3", "0.000001", "1E-7", "0.001234",
        "123.4500", "1.000000000000000000000000000000000E+6144", "1E-6176", "-1E-6176", "0E-6176",
        "0E+6111", "9.999999999999999999999999999999999E+6144", "-9.999999999999999999999999999999999E+6144",
        "1234567890123456789012345678901234", "NaN", "Infinity", "-Infinity",
    ])
    func canonicalStringsRoundTrip(text: String) throws {
        #expect(try Decimal128(string: text).stringValue == text)
    }

    @Test(arguments: [
        ("1E+6144", "1.000000000000000000000000000000000E+6144"),
        ("0E+6200", "0E+6111"),
        ("0E-6200", "0E-6176"),
        (".5", "0.5"),
        ("5.", "5"),
        ("+1", "1"),
        ("1e3", "1E+3"),
        ("1E-0", "1"),
        ("-inf", "-Infinity"),
        ("+INFINITY", "Infinity"),
        ("nan", "NaN"),
        ("12345678901234567890123456789012345", "1.234567890123456789012345678901234E+34"),
        ("12345678901234567890123456789012355", "1.234567890123456789012345678901236E+34"),
        ("123456789012345678901234567890123450001", "1.234567890123456789012345678901235E+38"),
        ("1E-6177", "0E-6176"),
        ("5E-6177", "0E-6176"),
        ("1.5E-6176", "2E-6176"),
        ("1E+6145", "Infinity"),
        ("-1E+99999999999", "-Infinity"),
        ("1E-99999999999", "0E-6176"),
        ("-0.0", "-0.0"),
        ("000123.4500", "123.4500"),
        ("0.0000001", "1E-7"),
        ("100E-2", "1.00"),
    ])
    func stringsParseToTheirCanonicalForm(text: String, canonical: String) throws {
        #expect(try Decimal128(string: text).stringValue == canonical)
    }

    @Test(arguments: ["", "-", "+", ".", "1.2.3", "1e", "1e+", "abc", " 1", "1 ", "E5", "0x10", "Infinit", "1,5", "--1", "1e5.0"])
    func malformedStringsThrowInvalidArgument(text: String) {
        #expect {
            _ = try Decimal128(string: text)
        } throws: { error in
            (error as? Realm.Error)?.code == .invalidArgument
        }
    }

    @Test func malformedStringLiteralTraps() async {
        await #expect(processExitsWith: .failure) {
            let value: Decimal128 = "twelve"
            _ = value
        }
    }

    // MARK: Bits

    @Test(arguments: [
        ("1", 0x3040_0000_0000_0000, 1),
        ("-1", 0xB040_0000_0000_0000, 1),
        ("0.1", 0x303E_0000_0000_0000, 1),
        ("0", 0x3040_0000_0000_0000, 0),
        ("-0", 0xB040_0000_0000_0000, 0),
        ("1.23E+5", 0x3046_0000_0000_0000, 123),
        ("1E-6176", 0, 1),
        ("1.000000000000000000000000000000000E+6144", 0x5FFE_314D_C644_8D93, 0x38C1_5B0A_0000_0000),
        ("9.999999999999999999999999999999999E+6144", 0x5FFF_ED09_BEAD_87C0, 0x378D_8E63_FFFF_FFFF),
        ("Infinity", 0x7800_0000_0000_0000, 0),
        ("-Infinity", 0xF800_0000_0000_0000, 0),
        ("NaN", 0x7C00_0000_0000_0000, 0),
    ] as [(String, UInt64, UInt64)])
    func encodesTheBIDBitsOfTheStandard(text: String, high: UInt64, low: UInt64) throws {
        let parsed = try Decimal128(string: text)
        #expect(parsed.high == high && parsed.low == low)
        #expect(Decimal128(low: low, high: high).stringValue == text)
    }

    @Test func nonCanonicalCoefficientsReadAsZero() {
        // Normal form with a coefficient of 2^113 - 1, above 10^34 - 1, at exponent 0.
        let oversized = Decimal128(low: .max, high: 0x3041_FFFF_FFFF_FFFF)
        #expect(oversized.stringValue == "0")
        #expect(oversized.isZero)
        // The large-coefficient form (bits 126–125 = 11), exponent 3 in bits 124–111.
        let largeForm = Decimal128(low: 0, high: 0x6000_0000_0000_0000 | UInt64(6176 + 3) << 47)
        #expect(largeForm.stringValue == "0E+3")
    }

    @Test func bytesAreLittleEndianAndRoundTrip() throws {
        let one = Decimal128(1)
        #expect(one.bytes == [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x30])
        #expect(Decimal128(bytes: one.bytes)?.high == one.high)
        let pi = try Decimal128(string: "3.141592653589793238462643383279503")
        #expect(Decimal128(bytes: pi.bytes).map { $0.low == pi.low && $0.high == pi.high } == true)
        #expect(Decimal128(bytes: [1, 2, 3]) == nil)
    }

    @Test func signalingNaNIsToldApartFromQuietNaN() {
        let signaling = Decimal128(low: 0, high: 0x7E00_0000_0000_0000)
        #expect(signaling.isNaN && signaling.isSignaling && signaling.isSignalingNaN)
        #expect(signaling.stringValue == "NaN")
        #expect(Decimal128.nan.isNaN && !Decimal128.nan.isSignaling)
        #expect((signaling + 1).isNaN && !(signaling + 1).isSignaling)
    }

    // MARK: Arithmetic

    @Test(arguments: [
        ("0.1", "+", "0.2", "0.3"),
        ("1", "/", "3", "0.3333333333333333333333333333333333"),
        ("2", "/", "3", "0.6666666666666666666666666666666667"),
        ("1", "/", "4", "0.25"),
        ("6", "/", "2", "3"),
        ("1.00", "*", "1.0", "1.000"),
        ("1E+100", "+", "1E-100", "1.000000000000000000000000000000000E+100"),
        ("1E+39", "-", "1E+0", "1.000000000000000000000000000000000E+39"),
        ("1E+40", "-", "1", "1.000000000000000000000000000000000E+40"),
        ("9999999999999999999999999999999999", "+", "1", "1.000000000000000000000000000000000E+34"),
        ("9999999999999999999999999999999999", "+", "0.5", "1.000000000000000000000000000000000E+34"),
        ("9999999999999999999999999999999998", "+", "0.5", "9999999999999999999999999999999998"),
        ("1E+100", "+", "0E-100", "1.000000000000000000000000000000000E+100"),
        ("5", "-", "5", "0"),
        ("-0", "+", "-0", "-0"),
        ("-0", "+", "0", "0"),
        ("0E+3", "*", "-2", "-0E+3"),
        ("1E-6176", "/", "2", "0E-6176"),
        ("3E-6176", "/", "2", "2E-6176"),
        ("9.999999999999999999999999999999999E+6144", "+", "1E+6111", "Infinity"),
        ("9.999999999999999999999999999999999E+6144", "*", "10", "Infinity"),
        ("-9.999999999999999999999999999999999E+6144", "*", "10", "-Infinity"),
        ("1", "/", "0", "Infinity"),
        ("-1", "/", "0", "-Infinity"),
        ("0", "/", "0", "NaN"),
        ("1", "/", "Infinity", "0E-6176"),
        ("Infinity", "-", "Infinity", "NaN"),
        ("Infinity", "+", "1", "Infinity"),
        ("Infinity", "*", "0", "NaN"),
        ("NaN", "+", "1", "NaN"),
        ("12345678901234567890.12345678901234", "*", "98765432109876543210", "1.219326311370217952249657064224965E+39"),
        ("1", "-", "0.00000000000000000000000000000000001", "1.000000000000000000000000000000000"),
        ("1E+6111", "*", "1000", "1.000E+6114"),
    ])
    func arithmeticIsExactOrRoundedHalfToEven(a: String, operation: String, b: String, expected: String) throws {
        let x = try Decimal128(string: a), y = try Decimal128(string: b)
        let result: Decimal128
        switch operation {
        case "+": result = x + y
        case "-": result = x - y
        case "*": result = x * y
        default: result = x / y
        }
        #expect(result.stringValue == expected)
    }

    @Test func compoundAssignmentAndNegationMatchTheOperators() {
        var total: Decimal128 = 10
        total += 5
        total -= 0.5
        total *= 2
        total /= 4
        #expect(total.stringValue == "7.25")
        #expect((-total).stringValue == "-7.25")
        #expect((-Decimal128()).stringValue == "-0")
        #expect(Decimal128(-3).magnitude == 3)
        #expect(Decimal128.zero + 1 == 1)
    }

    // MARK: Equality, ordering and hashing

    @Test func equalValuesWithDifferentExponentsAreEqualAndHashAlike() throws {
        let pairs: [(String, String)] = [("1.0", "1"), ("1.00", "100E-2"), ("0", "-0E+7"), ("1E+3", "1000"), ("NaN", "-NaN")]
        for (a, b) in pairs {
            let x = try Decimal128(string: a), y = try Decimal128(string: b)
            #expect(x == y, "\(a) == \(b)")
            #expect(x.hashValue == y.hashValue, "hash(\(a)) == hash(\(b))")
        }
        #expect(Set([Decimal128(1), try Decimal128(string: "1.000"), .nan, .nan]).count == 2)
        #expect(try Decimal128(string: "1.5") != Decimal128(string: "1.49"))
    }

    @Test func comparisonsAlignExponents() throws {
        #expect(try Decimal128(string: "1.5") > Decimal128(string: "1.49"))
        #expect(try Decimal128(string: "-1.5") < Decimal128(string: "-1.49"))
        #expect(try Decimal128(string: "1E+1") > Decimal128(string: "9.99999"))
        #expect(try Decimal128(string: "0.0000001") > 0)
        #expect(try Decimal128(string: "-0.0000001") < Decimal128(string: "-0"))
        #expect(try !(Decimal128(0) < Decimal128(string: "-0")))
    }

    @Test func orderingIsTotalWithNaNFirst() throws {
        let values: [Decimal128] = try ["Infinity", "1", "NaN", "-Infinity", "-1E+6144", "0", "1E-6176"].map(Decimal128.init(string:))
        #expect(values.sorted().map(\.stringValue) == ["NaN", "-Infinity", "-1.000000000000000000000000000000000E+6144", "0", "1E-6176", "1", "Infinity"])
        #expect(Decimal128.nan < -Decimal128.infinity)
        #expect(Decimal128.minimumDecimalNumber < -1 && Decimal128.maximumDecimalNumber < .infinity)
        #expect(Decimal128.min == Decimal128.minimumDecimalNumber && Decimal128.max == Decimal128.maximumDecimalNumber)
    }

    // MARK: Conversions

    @Test func doublesConvertThroughTheirShortestDecimalForm() {
        #expect(Decimal128(0.1).stringValue == "0.1")
        #expect(Decimal128(1.0).stringValue == "1")
        #expect(Decimal128(-2.5e-7).stringValue == "-2.5E-7")
        #expect(Decimal128(1e16).stringValue == "1E+16")
        #expect(Decimal128(Double.infinity) == .infinity)
        #expect(Decimal128(Double.nan).isNaN)
        let literal: Decimal128 = 0.1
        #expect(literal == Decimal128(0.1))
        #expect(Decimal128(0.1) + Decimal128(0.2) == Decimal128(0.3))
    }

    @Test func valuesConvertFromEveryAcceptedType() throws {
        #expect(Decimal128(value: 42).stringValue == "42")
        #expect(Decimal128(value: UInt64.max).stringValue == "18446744073709551615")
        #expect(Decimal128(value: Int8(-7)).stringValue == "-7")
        #expect(Decimal128(value: 0.25).stringValue == "0.25")
        #expect(Decimal128(value: Float(0.1)).stringValue == "0.1")
        #expect(Decimal128(value: "1.5E+3").stringValue == "1.5E+3")
        #expect(Decimal128(value: Decimal(string: "3.75")!).stringValue == "3.75")
        #expect(Decimal128(value: Decimal128(7)).stringValue == "7")
        #expect(Decimal128(value: "not a number").isNaN)
        #expect(Decimal128(value: Date()).isNaN)
        #expect(Decimal128(number: NSNumber(value: 12)).stringValue == "12")
        #expect(Decimal128(number: NSNumber(value: 0.1)).stringValue == "0.1")
        #expect(Decimal128(number: NSNumber(value: UInt64.max)).stringValue == "18446744073709551615")
    }

    @Test func exactIntegerConversionFailsPast34Digits() {
        #expect(Decimal128(exactly: Int64.max)?.stringValue == "9223372036854775807")
        let tenTo38: UInt128 = 100_000_000_000_000_000_000_000_000_000_000_000_000
        #expect(Decimal128(exactly: tenTo38)?.stringValue == "1.000000000000000000000000000000000E+38")
        #expect(Decimal128(exactly: tenTo38 + 1) == nil)
        #expect(Decimal128(exactly: UInt128.max) == nil)
    }

    @Test func readsBackAsDoubleAndInteger() throws {
        #expect(try Decimal128(string: "0.1").doubleValue == 0.1)
        #expect(try Decimal128(string: "1E+6144").doubleValue == .infinity)
        #expect(try Decimal128(string: "-12.9").int64Value == -12)
        #expect(try Decimal128(string: "1.2E+3").int64Value == 1200)
        #expect(try Decimal128(string: "-9223372036854775808").int64Value == .min)
        #expect(try Decimal128(string: "9223372036854775808").int64Value == nil)
        #expect(try Decimal128(string: "1E+30").int64Value == nil)
        #expect(try Decimal128(string: "1E-40").int64Value == 0)
        #expect(Decimal128.nan.int64Value == nil)
    }

    @Test func classifiesValues() throws {
        #expect(try Decimal128(string: "-0E+5").isZero)
        #expect(try Decimal128(string: "-0").isNegative)
        #expect(try Decimal128(string: "-0").sign == .minus)
        #expect(Decimal128.infinity.isInfinite && !Decimal128.infinity.isFinite)
        #expect(!Decimal128.nan.isInfinite && !Decimal128.nan.isZero)
        #expect(Decimal128(5).isFinite && !Decimal128(5).isNegative)
    }

    @Test func codableRoundTripsThroughItsString() throws {
        let values: [Decimal128] = try ["1.50", "-0", "1E-6176", "NaN", "-Infinity"].map(Decimal128.init(string:))
        let data = try JSONEncoder().encode(values)
        #expect(String(decoding: data, as: UTF8.self) == #"["1.50","-0","1E-6176","NaN","-Infinity"]"#)
        let decoded = try JSONDecoder().decode([Decimal128].self, from: data)
        #expect(decoded.map(\.stringValue) == values.map(\.stringValue))
        let numbers = try JSONDecoder().decode([Decimal128].self, from: Data("[12, 0.1]".utf8))
        #expect(numbers.map(\.stringValue) == ["12", "0.1"])
    }
}
