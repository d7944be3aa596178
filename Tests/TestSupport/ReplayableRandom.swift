/// SplitMix64 with the helpers the crash, fault and damage suites use; the other suites of both
/// test targets use it as `SeededRandom`. Every random choice in the crash, fault and damage
/// suites comes from one of these, and every failure message names its seed, so a failure
/// replays exactly.
package struct ReplayableRandom: RandomNumberGenerator, Sendable {
    package let seed: UInt64
    private var state: UInt64

    package init(seed: UInt64) {
        self.seed = seed
        self.state = seed
    }

    package mutating func next() -> UInt64 {
        // Wrapping arithmetic: the generator is defined modulo 2^64.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly chosen value in `0..<bound` (bound > 0).
    package mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }

    /// True with probability `percent` / 100.
    package mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    package mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }

    /// A seed derived from `seed` and some indices, for generators that must not depend on how
    /// many values another one drew.
    package static func derive(_ seed: UInt64, _ parts: Int...) -> UInt64 {
        var result = seed
        for part in parts {
            var generator = ReplayableRandom(seed: result ^ UInt64(bitPattern: Int64(part)))
            result = generator.next()
        }
        var generator = ReplayableRandom(seed: result)
        return generator.next()
    }
}

/// The model-based, tree, query and notification tests use the same generator as the crash
/// suites.
package typealias SeededRandom = ReplayableRandom
