/// The keys of one encrypted file, derived from the user's 64-byte key and the file's random
/// 32-byte salt with HKDF-SHA-256 (docs/EncryptionProposal.md §4):
///
/// | key | bytes | HKDF info |
/// |---|---|---|
/// | pages (AES-256-XTS) | 64 | "OpenRealm/5/xts" |
/// | nodes (HMAC-SHA-256) | 32 | "OpenRealm/5/mac" |
/// | key check | 32 | "OpenRealm/5/check" |
///
/// Why derived and not the user key itself: a new salt for every copy, compaction or re-key
/// gives every file its own keys, so equal plaintext at one place in two files encrypts
/// differently; and separate keys per use mean the MAC key never enters the cipher. All 64
/// user bytes are key input (Realm's split into an AES half and an HMAC half is not kept).
///
/// The key check, HMAC(check key, "OpenRealm key check")[0..<16], is stored in the header so
/// that a wrong key is told apart from a damaged file before any page is decrypted; it
/// reveals nothing of the page or node keys, which come from other HKDF outputs.
///
/// An encrypted LZ4 copy (Compressed/CompressedFormat.swift, format 3) derives its keys the
/// same way under the labels "OpenRealm/z3/…" (`lz4CopyLabels`): its blocks' XTS key, its
/// blocks' tag key and its key check, never equal to a realm file's under the same user key.
package struct EncryptionKeys: Sendable {
    /// The HKDF labels of an encrypted realm file (formats 5-6).
    package static let fileLabels = "OpenRealm/5"
    /// The HKDF labels of an encrypted LZ4 copy (compressed format 3).
    package static let lz4CopyLabels = "OpenRealm/z3"

    package static let userKeyLength = 64
    package static let saltLength = 32

    package let pages: PageCipher
    package let nodes: NodeAuthenticator
    /// 16 bytes, stored in the file's header.
    package let keyCheck: [UInt8]

    /// The keys for `userKey` (64 bytes) and the file's `salt` (32 bytes). The caller checks
    /// the lengths first (a wrong user key length is the user's error, with a typed error).
    ///
    /// `labels`: the prefix of the HKDF labels, "/xts", "/mac" and "/check" appended
    /// (`fileLabels`, `lz4CopyLabels`).
    package init(userKey: [UInt8], salt: [UInt8], labels: String = EncryptionKeys.fileLabels) {
        precondition(userKey.count == Self.userKeyLength, "an encryption key is 64 bytes, not \(userKey.count)")
        precondition(salt.count == Self.saltLength, "a file's salt is 32 bytes, not \(salt.count)")
        func derive(_ info: String, _ count: Int) -> [UInt8] {
            HKDFSHA256.derive(inputKey: userKey, salt: salt, info: Array(info.utf8), count: count)
        }
        // Each derived key lives in one local array, wiped once OpenSSL holds its own copy
        // (`wipe`: what is wiped and what cannot be).
        var pageKey = derive(labels + "/xts", 64)
        pages = PageCipher(key: pageKey)
        wipe(&pageKey)
        var nodeKey = derive(labels + "/mac", 32)
        nodes = NodeAuthenticator(key: nodeKey)
        wipe(&nodeKey)
        var checkKey = derive(labels + "/check", 32)
        let check = HMACSHA256.authenticate(key: checkKey, message: Array("OpenRealm key check".utf8))
        wipe(&checkKey)
        keyCheck = Array(check[0..<16])
    }
}
