import Dispatch
import Foundation
import CCrypto
import Testing
@testable import RealmStorage

/// The crypto layer of encryption at rest (Sources/RealmStorage/Crypto/, CCrypto): published
/// vectors for each primitive (IEEE 1619 XTS-AES-256, RFC 4231 HMAC-SHA-256, RFC 5869
/// HKDF-SHA-256), the properties the file format relies on (page parts, tweaks, what a node tag
/// binds), and many threads sharing one key through the context pool (also run under TSan).
@Suite struct CryptoTests {
    // MARK: XTS

    /// IEEE 1619-2007 Annex B vectors 10 and 11: XTS-AES-256, 512-byte data units, data unit
    /// sequence numbers 0xff and 0xffff (the page index here), plaintext 0x00...0xff twice.
    static let xtsKey = bytes(
        "2718281828459045235360287471352662497757247093699959574966967627"
            + "3141592653589793238462643383279502884197169399375105820974944592")
    static let xtsPlaintext = (0..<512).map { UInt8($0 & 0xff) }
    static let xtsVectors: [(unit: UInt64, ciphertext: String)] = [
        (0xff,
         "1c3b3a102f770386e4836c99e370cf9bea00803f5e482357a4ae12d414a3e63b5d31e276f8fe4a8d66b317f9ac683f44"
            + "680a86ac35adfc3345befecb4bb188fd5776926c49a3095eb108fd1098baec70aaa66999a72a82f27d848b21d4a741b0"
            + "c5cd4d5fff9dac89aeba122961d03a757123e9870f8acf1000020887891429ca2a3e7a7d7df7b10355165c8b9a6d0a7d"
            + "e8b062c4500dc4cd120c0f7418dae3d0b5781c34803fa75421c790dfe1de1834f280d7667b327f6c8cd7557e12ac3a0f"
            + "93ec05c52e0493ef31a12d3d9260f79a289d6a379bc70c50841473d1a8cc81ec583e9645e07b8d9670655ba5bbcfecc6"
            + "dc3966380ad8fecb17b6ba02469a020a84e18e8f84252070c13e9f1f289be54fbc481457778f616015e1327a02b140f1"
            + "505eb309326d68378f8374595c849d84f4c333ec4423885143cb47bd71c5edae9be69a2ffeceb1bec9de244fbe15992b"
            + "11b77c040f12bd8f6a975a44a0f90c29a9abc3d4d893927284c58754cce294529f8614dcd2aba991925fedc4ae74ffac"
            + "6e333b93eb4aff0479da9a410e4450e0dd7ae4c6e2910900575da401fc07059f645e8b7e9bfdef33943054ff84011493"
            + "c27b3429eaedb4ed5376441a77ed43851ad77f16f541dfd269d50d6a5f14fb0aab1cbb4c1550be97f7ab4066193c4caa"
            + "773dad38014bd2092fa755c824bb5e54c4f36ffda9fcea70b9c6e693e148c151"),
        (0xffff,
         "77a31251618a15e6b92d1d66dffe7b50b50bad552305ba0217a610688eff7e11e1d0225438e093242d6db274fde801d4"
            + "cae06f2092c728b2478559df58e837c2469ee4a4fa794e4bbc7f39bc026e3cb72c33b0888f25b4acf56a2a9804f1ce6d"
            + "3d6e1dc6ca181d4b546179d55544aa7760c40d06741539c7e3cd9d2f6650b2013fd0eeb8c2b8e3d8d240ccae2d4c9832"
            + "0a7442e1c8d75a42d6e6cfa4c2eca1798d158c7aecdf82490f24bb9b38e108bcda12c3faf9a21141c3613b58367f922a"
            + "aa26cd22f23d708dae699ad7cb40a8ad0b6e2784973dcb605684c08b8d6998c69aac049921871ebb65301a4619ca80ec"
            + "b485a31d744223ce8ddc2394828d6a80470c092f5ba413c3378fa6054255c6f9df4495862bbb3287681f931b687c888a"
            + "bf844dfc8fc28331e579928cd12bd2390ae123cf03818d14dedde5c0c24c8ab018bfca75ca096f2d531f3d1619e785f1"
            + "ada437cab92e980558b3dce1474afb75bfedbf8ff54cb2618e0244c9ac0d3c66fb51598cd2db11f9be39791abe447c63"
            + "094f7c453b7ff87cb5bb36b7c79efb0872d17058b83b15ab0866ad8a58656c5a7e20dbdf308b2461d97c0ec0024a2715"
            + "055249cf3b478ddd4740de654f75ca686e0d7345c69ed50cdc2a8b332b1f8824108ac937eb050585608ee734097fc090"
            + "54fbff89eeaeea791f4a7ab1f9868294a4f9e27b42af8100cb9d59cef9645803"),
    ]

    @Test(arguments: 0..<2)
    func xtsMatchesIEEE1619(vector: Int) {
        let (unit, expected) = Self.xtsVectors[vector]
        let cipher = PageCipher(key: Self.xtsKey)
        var text = Self.xtsPlaintext
        text.withUnsafeMutableBytes { cipher.encrypt(page: unit, $0) }
        #expect(text == Self.bytes(expected))
        text.withUnsafeMutableBytes { cipher.decrypt(page: unit, $0) }
        #expect(text == Self.xtsPlaintext)
        // Out of place, the same bytes.
        var out = [UInt8](repeating: 0, count: 512)
        Self.xtsPlaintext.withUnsafeBytes { source in
            out.withUnsafeMutableBytes { cipher.encrypt(page: unit, from: source, into: $0) }
        }
        #expect(out == Self.bytes(expected))
    }

    /// The file layer encrypts only the blocks a write covers: the first k blocks of a page,
    /// encrypted alone, are the first k blocks of the page encrypted whole (and decrypt alone).
    @Test func aPagesFirstBlocksEncryptAsInTheWholePage() {
        var random = SystemRandomNumberGenerator()
        let cipher = PageCipher(key: (0..<64).map { _ in UInt8.random(in: 0...255, using: &random) })
        let page = (0..<PageCipher.pageSize).map { _ in UInt8.random(in: 0...255, using: &random) }
        var whole = page
        whole.withUnsafeMutableBytes { cipher.encrypt(page: 7, $0) }
        for blocks in [1, 2, 3, 17, 128, 255, 256] {
            var part = Array(page[0..<blocks * 16])
            part.withUnsafeMutableBytes { cipher.encrypt(page: 7, $0) }
            #expect(part[...] == whole[0..<blocks * 16], "\(blocks) blocks")
            part.withUnsafeMutableBytes { cipher.decrypt(page: 7, $0) }
            #expect(part[...] == page[0..<blocks * 16], "\(blocks) blocks")
        }
    }

    @Test func pagesRoundTripAndDifferByIndex() {
        let cipher = PageCipher(key: (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        let plain = (0..<PageCipher.pageSize).map { UInt8(truncatingIfNeeded: $0 * 31) }
        var seen: Set<[UInt8]> = []
        for page: UInt64 in [0, 1, 2, 255, 256, 1 << 32, UInt64.max] {
            var text = plain
            text.withUnsafeMutableBytes { cipher.encrypt(page: page, $0) }
            #expect(text != plain)
            #expect(seen.insert(text).inserted, "page \(page) encrypts as another page did")
            var back = [UInt8](repeating: 0, count: text.count)
            text.withUnsafeBytes { source in
                back.withUnsafeMutableBytes { cipher.decrypt(page: page, from: source, into: $0) }
            }
            #expect(back == plain)
        }
    }

    // MARK: HMAC and HKDF

    /// RFC 4231 test cases 1-4, 6 and 7 (5 truncates, which `authenticate` does not).
    static let hmacVectors: [(key: [UInt8], message: [UInt8], mac: String)] = [
        ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (Array(1...25), [UInt8](repeating: 0xcd, count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ([UInt8](repeating: 0xaa, count: 131),
         Array(("This is a test using a larger than block-size key and a larger than block-size data. "
            + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: 0..<6)
    func hmacMatchesRFC4231(vector: Int) {
        let (key, message, mac) = Self.hmacVectors[vector]
        #expect(HMACSHA256.authenticate(key: key, message: message) == Self.bytes(mac))
    }

    /// RFC 5869 test cases 1-3 (3: no salt and no info).
    static let hkdfVectors: [(inputKey: [UInt8], salt: [UInt8], info: [UInt8], output: String)] = [
        ([UInt8](repeating: 0x0b, count: 22), Array(0x00...0x0c), Array(0xf0...0xf9),
         "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
        (Array(0x00...0x4f), Array(0x60...0xaf), Array(0xb0...0xff),
         "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09"
            + "da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
        ([UInt8](repeating: 0x0b, count: 22), [], [],
         "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
    ]

    @Test(arguments: 0..<3)
    func hkdfMatchesRFC5869(vector: Int) {
        let (inputKey, salt, info, output) = Self.hkdfVectors[vector]
        let expected = Self.bytes(output)
        #expect(HKDFSHA256.derive(inputKey: inputKey, salt: salt, info: info, count: expected.count) == expected)
    }

    /// A node tag is the HMAC of offset ‖ kind ‖ bytes, cut to 16 bytes, however often the
    /// pooled context is reused; changing the offset, the kind or any bit changes it.
    @Test func aNodeTagBindsOffsetKindAndEveryByte() {
        let key = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        let nodes = NodeAuthenticator(key: key)
        let body = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 57) }
        func tag(_ offset: UInt64, _ kind: UInt8, _ bytes: [UInt8]) -> NodeTag {
            bytes.withUnsafeBytes { nodes.tag(offset: offset, kind: kind, bytes: $0) }
        }
        let base = tag(4096, 3, body)
        for _ in 0..<3 {
            var message: [UInt8] = []
            withUnsafeBytes(of: UInt64(4096).littleEndian) { message += $0 }
            message.append(3)
            let mac = HMACSHA256.authenticate(key: key, message: message + body)
            #expect(mac[0..<16].withUnsafeBytes { NodeTag(loadingFrom: $0.baseAddress!) } == base)
            #expect(tag(4096, 3, body) == base)
        }
        var tags: Set<[UInt64]> = [[base.low, base.high]]
        func distinct(_ other: NodeTag, _ what: String) {
            #expect(tags.insert([other.low, other.high]).inserted, "\(what) did not change the tag")
        }
        distinct(tag(4112, 3, body), "the offset")
        distinct(tag(4096 + (1 << 40), 3, body), "a high offset bit")
        distinct(tag(4096, 4, body), "the kind")
        distinct(tag(4096, 3, Array(body.dropLast())), "the length")
        distinct(tag(4096, 3, []), "no bytes")
        for index in body.indices {
            for bit in [0, 7] {
                var changed = body
                changed[index] ^= 1 << bit
                distinct(tag(4096, 3, changed), "bit \(bit) of byte \(index)")
            }
        }
    }

    @Test func aNodeTagStoresAndLoadsLittleEndian() {
        let tag = NodeTag(low: 0x0706_0504_0302_0100, high: 0x0f0e_0d0c_0b0a_0908)
        var bytes = [UInt8](repeating: 0xff, count: 17)
        bytes.withUnsafeMutableBytes { tag.store(to: $0.baseAddress! + 1) }
        #expect(bytes == [0xff] + Array(0...15))
        #expect(bytes.withUnsafeBytes { NodeTag(loadingFrom: $0.baseAddress! + 1) } == tag)
    }

    // MARK: Keys and randomness

    @Test func fileKeysDependOnTheKeyAndTheSalt() throws {
        let userKey = try SecureRandom.bytes(EncryptionKeys.userKeyLength)
        let salt = try SecureRandom.bytes(EncryptionKeys.saltLength)
        let keys = EncryptionKeys(userKey: userKey, salt: salt)
        #expect(keys.keyCheck.count == 16)
        let check = HMACSHA256.authenticate(
            key: HKDFSHA256.derive(inputKey: userKey, salt: salt, info: Array("OpenRealm/5/check".utf8), count: 32),
            message: Array("OpenRealm key check".utf8))
        #expect(keys.keyCheck == Array(check[0..<16]))
        #expect(EncryptionKeys(userKey: userKey, salt: salt).keyCheck == keys.keyCheck)
        var otherSalt = salt
        otherSalt[31] ^= 1
        var otherKey = userKey
        otherKey[63] ^= 1
        #expect(EncryptionKeys(userKey: userKey, salt: otherSalt).keyCheck != keys.keyCheck)
        #expect(EncryptionKeys(userKey: otherKey, salt: salt).keyCheck != keys.keyCheck)

        // The page key is HKDF(..., "OpenRealm/5/xts"), the node key HKDF(..., "OpenRealm/5/mac").
        let pages = PageCipher(key: HKDFSHA256.derive(inputKey: userKey, salt: salt, info: Array("OpenRealm/5/xts".utf8), count: 64))
        var a = [UInt8](repeating: 0x5a, count: 64), b = a
        a.withUnsafeMutableBytes { keys.pages.encrypt(page: 9, $0) }
        b.withUnsafeMutableBytes { pages.encrypt(page: 9, $0) }
        #expect(a == b)
        let nodes = NodeAuthenticator(key: HKDFSHA256.derive(inputKey: userKey, salt: salt, info: Array("OpenRealm/5/mac".utf8), count: 32))
        #expect(a.withUnsafeBytes { keys.nodes.tag(offset: 1, kind: 2, bytes: $0) }
            == a.withUnsafeBytes { nodes.tag(offset: 1, kind: 2, bytes: $0) })
    }

    /// `openrealm_cleanse` zeroes what it is given; `wipe` zeroes and empties an array it holds
    /// alone, and leaves another holder's copy as it was (copy on write: it cannot reach it).
    @Test func wipingZeroesKeyMaterialAndOnlyTheWipersOwn() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 16)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0xA5)
        openrealm_cleanse(buffer.baseAddress, 48)
        #expect(buffer[0..<48].allSatisfy { $0 == 0 } && buffer[48..<64].allSatisfy { $0 == 0xA5 })
        openrealm_cleanse(nil, 0)

        var key = (0..<64).map { UInt8($0 + 1) }
        let other = key
        wipe(&key)
        #expect(key.isEmpty)
        #expect(other == (0..<64).map { UInt8($0 + 1) })
        var empty: [UInt8] = []
        wipe(&empty)
        #expect(empty.isEmpty)
        // Keys made after their derived material was wiped still work (the contexts hold copies).
        let keys = EncryptionKeys(userKey: other, salt: [UInt8](repeating: 3, count: 32))
        var page = [UInt8](repeating: 0x5A, count: 64)
        page.withUnsafeMutableBytes { keys.pages.encrypt(page: 1, $0) }
        page.withUnsafeMutableBytes { keys.pages.decrypt(page: 1, $0) }
        #expect(page == [UInt8](repeating: 0x5A, count: 64))
    }

    @Test func randomBytesDiffer() throws {
        #expect(try SecureRandom.bytes(0) == [])
        let a = try SecureRandom.bytes(32), b = try SecureRandom.bytes(32)
        #expect(a.count == 32 && a != b)
    }

    // MARK: Threads

    /// Threads sharing one cipher and one authenticator get what one thread gets, with the
    /// default pool and with a pool of one context (every other thread copies a temporary one).
    @Test(arguments: [0, 1])
    func manyThreadsShareOneKey(contexts: Int) {
        let key = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 11) }
        let cipher = PageCipher(key: key, contexts: contexts)
        let nodes = NodeAuthenticator(key: Array(key[0..<32]), contexts: contexts)
        let threads = 8, calls = 10_000
        // The expected results, computed on this thread: page p of one plaintext for 64 pages.
        let plain = (0..<256).map { UInt8(truncatingIfNeeded: $0 &* 3) }
        let expectedPages: [[UInt8]] = (0..<64).map { page in
            var text = plain
            text.withUnsafeMutableBytes { cipher.encrypt(page: UInt64(page), $0) }
            return text
        }
        let expectedTags: [NodeTag] = (0..<64).map { offset in
            plain.withUnsafeBytes { nodes.tag(offset: UInt64(offset), kind: 1, bytes: $0) }
        }
        let mismatches = Locked(0)
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var wrong = 0
                var text = plain
                for call in 0..<calls {
                    let index = (call &* 7 &+ thread) & 63
                    if call & 1 == 0 {
                        text.withUnsafeMutableBytes { cipher.encrypt(page: UInt64(index), $0) }
                        if text != expectedPages[index] { wrong += 1 }
                        text.withUnsafeMutableBytes { cipher.decrypt(page: UInt64(index), $0) }
                        if text != plain { wrong += 1; text = plain }
                    } else {
                        let tag = plain.withUnsafeBytes { nodes.tag(offset: UInt64(index), kind: 1, bytes: $0) }
                        if tag != expectedTags[index] { wrong += 1 }
                    }
                }
                mismatches.withLock { $0 += wrong }
            }
        }
        group.wait()
        #expect(mismatches.withLock { $0 } == 0)
    }

    // MARK: Helpers

    static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        precondition(digits.count % 2 == 0, "odd hex")
        func value(_ digit: UInt8) -> UInt8 {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: preconditionFailure("not a hex digit")
            }
        }
        return stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
    }
}
