/// The keys of one encrypted LZ4 copy (CompressedFormat.swift, format 3): the copy's random
/// salt and what HKDF-SHA-256 derives from it and the user's 64-byte key: the blocks' XTS key,
/// their tag key and the key check (`EncryptionKeys` under the labels "OpenRealm/z3/…"), and
/// the key of the layout MAC over the header and the block table ("OpenRealm/z3/layout").
///
/// Why XTS with a tag and not GCM: XTS needs no nonce, so nothing a copied or restored copy
/// holds can make one repeat (a copy is written once, under keys no other file has), and it is
/// the cipher and the C shim encrypted realm files already use; the tag, kept in the block
/// table, makes each block authenticated, as GCM's would.
struct CompressedCopyKeys: Sendable {
    let salt: [UInt8]
    /// `pages` encrypts the blocks, `nodes` tags them, `keyCheck` is stored in the header.
    let keys: EncryptionKeys
    private let layoutKey: [UInt8]

    /// The keys of `userKey` (64 bytes, checked before) with the copy's `salt` (32 bytes).
    init(userKey: [UInt8], salt: [UInt8]) {
        self.salt = salt
        keys = EncryptionKeys(userKey: userKey, salt: salt, labels: EncryptionKeys.lz4CopyLabels)
        layoutKey = HKDFSHA256.derive(inputKey: userKey, salt: salt, info: Array((EncryptionKeys.lz4CopyLabels + "/layout").utf8), count: 32)
    }

    /// The keys of a new copy: a new random salt.
    ///
    /// - Throws: `ioFailure` when the system has no random bytes to give.
    init(newCopyWith userKey: [UInt8]) throws(StorageError) {
        self.init(userKey: userKey, salt: try SecureRandom.bytes(EncryptionKeys.saltLength))
    }

    /// `length` rounded up to the cipher's 16-byte blocks.
    static func padded(_ length: Int) -> Int { (length + 15) & ~15 }

    /// The tag of block `index`, stored as `length` bytes (before padding) with `flags`, whose
    /// padded ciphertext is `ciphertext` (CompressedFormat.swift, invariant 3). The index and
    /// the length share the node tag's 8-byte place word: both are below 2^32 (the block count
    /// is a u32, a stored block at most LZ4's bound of 1 MiB), so no two pairs give one word.
    func blockTag(index: Int, length: UInt32, flags: UInt32, ciphertext: UnsafeRawBufferPointer) -> NodeTag {
        keys.nodes.tag(offset: UInt64(index) << 32 | UInt64(length), kind: UInt8(truncatingIfNeeded: flags), bytes: ciphertext)
    }

    /// The layout MAC: HMAC-SHA-256 over the header's first 128 bytes and the block table.
    func layoutMAC(header: some Collection<UInt8>, table: [UInt8]) -> [UInt8] {
        HMACSHA256.authenticate(key: layoutKey, message: Array(header) + table)
    }

    /// The keys for the compressed copy whose header is `header` (all of format 3's 160 bytes
    /// when `encrypted`), given `key` (nil: opened without one); nil for a plain copy opened
    /// without a key (CompressedFormat.swift, invariant 6).
    ///
    /// - Throws: `decryptionFailed` when `key` does not fit the copy, `invalidArgument` for a key
    ///   that is not 64 bytes, `unsupportedFormatVersion` for a cipher suite this build does not know.
    static func keys(forHeader header: [UInt8], encrypted: Bool, key: [UInt8]?, path: String) throws(StorageError) -> CompressedCopyKeys? {
        if let key { try EncryptionHeader.validate(key) }
        guard encrypted else {
            guard key == nil else {
                throw StorageError(.decryptionFailed, "the file is an LZ4-compressed copy, which is not encrypted, and an encryption key was given: "
                                   + "open it without a key", path: path)
            }
            return nil
        }
        let suite = header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: CompressedFormat.suiteOffset, as: UInt32.self)) }
        guard suite == CompressedFormat.suiteXTSHMAC else {
            throw StorageError(.unsupportedFormatVersion, "the compressed copy is encrypted with cipher suite \(suite), which this build does not know; "
                               + "open it with a newer OpenRealm", path: path)
        }
        guard let key else {
            throw StorageError(.decryptionFailed, "the file is an encrypted LZ4-compressed copy: open it with the 64-byte encryptionKey it was written with",
                               path: path)
        }
        let salt = Array(header[CompressedFormat.saltOffset..<(CompressedFormat.saltOffset + EncryptionKeys.saltLength)])
        let keys = CompressedCopyKeys(userKey: key, salt: salt)
        let check = Array(header[CompressedFormat.keyCheckOffset..<(CompressedFormat.keyCheckOffset + EncryptionHeader.keyCheckLength)])
        guard EncryptionHeader.constantTimeEqual(keys.keys.keyCheck, check) else {
            throw StorageError(.decryptionFailed, "the encryption key does not match the LZ4-compressed copy: it is not the key the copy was written with "
                               + "(another realm's key, or the source's when the copy was given its own), or the copy's header was damaged", path: path)
        }
        return keys
    }
}
