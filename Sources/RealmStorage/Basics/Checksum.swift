/// A fast 64-bit checksum for detecting torn or missing writes (not an adversarial MAC).
///
/// Eight bytes per step: mix each little-endian word into the state with a multiply and a
/// rotate, then fold the length in. Any byte changed, dropped or zeroed in a commit's extents
/// changes the result with overwhelming probability.
package struct Checksum {
    private var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    private var length: UInt64 = 0

    package init() {}

    @inline(__always)
    private mutating func mix(_ word: UInt64) {
        // Wrapping multiply and add are the point of the mixer.
        state = (state ^ (word &* 0xBF58_476D_1CE4_E5B9))
        state = ((state << 27) | (state >> 37)) &* 0x94D0_49BB_1331_11EB &+ 0x2545_F491_4F6C_DD1D
    }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        var i = 0
        while i + 8 <= n {
            mix(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        if i < n {
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < n {
                tail |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift
                shift += 8
                i += 1
            }
            mix(tail)
        }
        length &+= UInt64(n)
    }

    package mutating func update(_ value: UInt64) { mix(value); length &+= 8 }

    package func finalize() -> UInt64 {
        var h = state ^ length
        h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
        return h ^ (h >> 31)
    }

    package static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var c = Checksum()
        c.update(bytes)
        return c.finalize()
    }

    package static func of(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { of($0) }
    }
}
