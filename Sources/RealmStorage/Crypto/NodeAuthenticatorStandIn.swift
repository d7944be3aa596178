// TEMPORARY STAND-IN (issue 29, step 3): NOT CRYPTOGRAPHIC. Replaced by the real
// `NodeAuthenticator` (HMAC-SHA-256 truncated to 128 bits, from the crypto shim on branch
// `crypto-shim`) as soon as that is on main; this file is then deleted.
//
// It has the shim's exact names and signatures so that node sealing (Nodes/NodeSealing.swift)
// builds and its tests run before the shim lands: a keyed 128-bit mix of the offset, the kind and
// the bytes, which every changed byte, offset, kind or key changes (it finds damage and
// misplacement; it does not resist forgery).

/// A node's 16-byte tag (see the stand-in note above).
package struct NodeTag: Equatable, Sendable {
    package var low: UInt64
    package var high: UInt64

    package init(low: UInt64, high: UInt64) {
        self.low = low
        self.high = high
    }

    /// The tag stored (little-endian, low first) at `pointer`.
    package init(loadingFrom pointer: UnsafeRawPointer) {
        low = UInt64(littleEndian: pointer.loadUnaligned(as: UInt64.self))
        high = UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// Stores the tag (little-endian, low first) at `pointer`.
    package func store(to pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: low.littleEndian, as: UInt64.self)
        pointer.storeBytes(of: high.littleEndian, toByteOffset: 8, as: UInt64.self)
    }
}

/// Computes node tags under one key (see the stand-in note above).
package final class NodeAuthenticator: Sendable {
    private let seeds: (UInt64, UInt64, UInt64, UInt64)

    /// - Parameter key: 32 bytes.
    package init(key: [UInt8]) {
        precondition(key.count == 32, "a node authentication key is 32 bytes")
        func word(_ i: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(key[i * 8 + $1]) << (8 * UInt64($1)) } }
        seeds = (word(0), word(1), word(2), word(3))
    }

    /// The tag of the node `bytes` at `offset` in the file, of kind `kind`.
    package func tag(offset: UInt64, kind: UInt8, bytes: UnsafeRawBufferPointer) -> NodeTag {
        // Wrapping multiply and add are the point of the mixer.
        @inline(__always) func mix(_ state: inout UInt64, _ word: UInt64) {
            state ^= word &* 0xBF58_476D_1CE4_E5B9
            state = ((state << 27) | (state >> 37)) &* 0x94D0_49BB_1331_11EB &+ 0x2545_F491_4F6C_DD1D
        }
        @inline(__always) func finalised(_ h: UInt64) -> UInt64 {
            var h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
            h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
            return h ^ (h >> 31)
        }
        var a = seeds.0, b = seeds.1
        mix(&a, offset)
        mix(&b, UInt64(kind) | UInt64(bytes.count) << 8)
        var i = 0
        while i + 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            mix(&a, word)
            mix(&b, word ^ seeds.2)
            i += 8
        }
        var tail: UInt64 = 0
        while i < bytes.count {
            tail = tail << 8 | UInt64(bytes[i])
            i += 1
        }
        mix(&a, tail)
        mix(&b, tail ^ seeds.3)
        return NodeTag(low: finalised(a ^ seeds.3), high: finalised(b &+ a))
    }
}
