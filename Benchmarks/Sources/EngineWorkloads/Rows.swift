// The data both engines get: the same rows, the same lookup keys, from one seed.

/// One row of the benchmark table: an integer primary key, a short string, a small
/// integer, a double and an optional string.
public struct BenchmarkRow: Sendable {
    public var id: Int64
    public var name: String
    public var age: Int64
    public var score: Double
    public var note: String?
}

/// SplitMix64: small, fast and the same on every platform, so both engines and every run
/// see identical data.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        // Wrapping arithmetic is the algorithm, not an overflow.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

public enum BenchmarkData {
    /// Rows with ids 0..<count: names of 8–16 letters, ages 0–99, doubles in [0, 1000),
    /// and a note of 10–20 letters on every other row (nil on the rest).
    public static func rows(count: Int, seed: UInt64 = 42) -> [BenchmarkRow] {
        var random = SeededGenerator(seed: seed)
        var rows = [BenchmarkRow]()
        rows.reserveCapacity(count)
        for i in 0..<count {
            let name = letters(Int.random(in: 8...16, using: &random), &random)
            let note: String? = Bool.random(using: &random) ? letters(Int.random(in: 10...20, using: &random), &random) : nil
            rows.append(BenchmarkRow(id: Int64(i), name: name, age: Int64.random(in: 0...99, using: &random),
                                     score: Double.random(in: 0..<1000, using: &random), note: note))
        }
        return rows
    }

    /// `count` keys drawn uniformly from 0..<range (with repeats).
    public static func lookupKeys(count: Int, range: Int, seed: UInt64 = 7) -> [Int64] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { _ in Int64.random(in: 0..<Int64(range), using: &random) }
    }

    private static func letters(_ n: Int, _ random: inout SeededGenerator) -> String {
        var bytes = [UInt8]()
        bytes.reserveCapacity(n)
        for _ in 0..<n { bytes.append(UInt8.random(in: 97...122, using: &random)) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What a lookup loop read, folded into one number so that the reads cannot be optimised
/// away and both engines can be checked to have read the same data.
public struct LookupChecksum: Equatable, Sendable, CustomStringConvertible {
    public var value: Int64 = 0
    public init() {}

    @inline(__always)
    public mutating func add(id: Int64, name: Int, age: Int64, score: Double, note: Int?) {
        // Wrapping: a checksum, overflow is expected and harmless.
        value = value &* 31 &+ id &+ Int64(name) &+ age &+ Int64(score) &+ Int64(note ?? -1)
    }

    public var description: String { String(value) }
}
