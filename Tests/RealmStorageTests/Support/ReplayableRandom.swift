/// SplitMix64 with the helpers the crash, fault and damage suites use. Every random choice in
/// those suites comes from one of these, and every failure message names its seed, so a
/// failure replays exactly.
struct ReplayableRandom: RandomNumberGenerator, Sendable {
    let seed: UInt64
    private var state: UInt64

    init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    mutating func next() -> UInt64 {
        // Wrapping arithmetic: the generator is defined modulo 2^64.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly chosen value in `0..<bound` (bound > 0).
    mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }

    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// A seed derived from `seed` and some indices, for generators that must not depend on how
    /// many values another one drew.
    static func derive(_ seed: UInt64, _ parts: Int...) -> UInt64 {
        var result = seed
        for part in parts {
            var generator = ReplayableRandom(seed: result ^ UInt64(bitPattern: Int64(part)))
            result = generator.next()
        }
        var generator = ReplayableRandom(seed: result)
        return generator.next()
    }
}
