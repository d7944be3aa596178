// The header of an encrypted realm file (format 6; docs/EncryptionProposal.md).
//
// An encrypted file keeps the first 128 bytes of its header page in the clear, so that any
// build can tell what the file is before it holds a key, and encrypts everything else:
//
//   offset  size  field (plaintext)
//   0       8     magic "ORealm\0\u{1}", as every realm file: a build that knows only format 4
//                 stops at the format version and says that a newer OpenRealm wrote the file
//   8       4     format version (6: seals; 5 was the same without them, never released)
//   12      4     page size (4096)
//   16      1     selector: the slot written last (a hint, as in FileHeader.swift)
//   17      1     cipher suite: 0 none; 1 AES-256-XTS pages, HMAC-SHA-256 node tags, keys
//                 derived with HKDF-SHA-256
//   18      6     reserved, 0
//   24      32    salt: random when the file is created, new for every copy, compaction or
//                 change of key
//   56      16    key check: HMAC-SHA-256(check key, "OpenRealm key check"), first 16 bytes
//   72      56    reserved, 0
//   128     ...   encrypted: the rest of the header page (root slots at 512 and 1024) and
//                 every page after it
//
// Keys. The user's 64-byte key is input key material only: HKDF-SHA-256 with the file's salt
// derives a 64-byte XTS key for the pages, a 32-byte key for node tags and a 32-byte key for
// the check above (EncryptionKeys). So two files, or a file and its copy, never share a key
// even under one user key, and a page copied from another file decrypts to noise.
//
// Invariants (the rest live beside the code that keeps them, named here so they are found):
//   E1. Every write past the first 128 bytes covers whole 16-byte blocks, and no block holds
//       bytes of two nodes (16-byte allocation: FreeSpace); so no write changes a ciphertext
//       block that holds a byte a pinned version reaches.
//   E4. A node's bytes are used only once its tag verified in this process (VerifiedNodes).
//   E7. There is no nonce or counter: keys depend only on the user key and the salt, and
//       XTS binds each 16-byte block to its page and place in the page. Nothing a copied or
//       restored file holds can make a nonce repeat.
//   E8. The key is checked before anything else of the file is read: a wrong key, a key for a
//       plain file and a plain open of an encrypted file each fail with `decryptionFailed`
//       and a message that says which, before any slot is decoded.
//   E9. A clear header no undamaged file holds is refused as damaged (`fileCorrupted`), not
//       advised as a plain file or another format: format 5 or 6 with no suite, or a format before
//       5 with the suite, salt and key check set (or with a salt and key check that fit the
//       key given). A plain file's reserved bytes are not read, so damage there alone still
//       opens it without a key (`kind(of:path:)`).
//   E10. Seals (format 6): every stored ref carries its child's tag bytes 0..<8, and a node
//        is used only if its tag verified (E4) and begins with the seal of the ref that
//        reached it, compared at every NodeView. Root slots and run headers carry the seals of
//        the top node, the free list and the commit record. So a node, or a subtree below the
//        root, rolled back to an older copy of itself is `fileCorrupted` (NodeSealing.swift, S5).
//   E11. Bottom-up: a node is sealed when placed, before any node naming it (S6).
//   E12. A ref's identity is its offset; a seal-less ref never opens a node (S7).
//   Limits: a whole file (slots included) restored from an older copy opens at its older
//   version, and damage that drops the newest commits looks like a crash; both need an anchor
//   outside the file (docs/EncryptionProposal.md §7 Q4).
//
// Format 5 files (encrypted, no seals) came only from development builds before seals: they
// are refused with `unsupportedFormatVersion`, saying so, not read without seals (which would
// accept exactly the rollback format 6 exists to stop).

/// What the first bytes of a realm file say about its encryption.
package enum EncryptionHeader {
    /// The format of encrypted files. Plain files stay at `FileHeader.formatVersion`.
    package static let formatVersion: UInt32 = 6
    /// Encrypted files without seals, written only by development builds (see above).
    package static let unsealedFormatVersion: UInt32 = 5
    /// AES-256-XTS pages, HMAC-SHA-256 node tags, HKDF-SHA-256 keys.
    package static let suiteXTSHMAC: UInt8 = 1
    package static let suiteOffset = 17
    package static let saltOffset = 24
    package static let keyCheckOffset = 56
    package static let keyCheckLength = 16
    /// The header bytes that are never encrypted.
    package static let plaintextLength = 128

    /// How a file's header describes its contents.
    package enum Kind: Equatable, Sendable {
        case plain
        case encrypted(salt: [UInt8], keyCheck: [UInt8])
    }

    /// The kind of the file whose header begins with `header` (at least `plaintextLength`
    /// bytes, the magic already checked). An encrypted file names its suite; a suite this
    /// build does not know is refused here.
    ///
    /// The clear bytes are not authenticated, so a damaged one is told apart by what no
    /// undamaged file holds (E9):
    /// - format 5 or 6 with suite 0: only encrypted files are of formats 5-6, and each names its
    ///   suite: `fileCorrupted`, the header is damaged (an encrypted file's suite, or a plain
    ///   file's format version: either way nothing says how to read the rest);
    /// - a format before 5 with the known suite, a salt and a key check all set: an encrypted
    ///   file whose format version was damaged (no single damaged byte of a plain file, whose
    ///   bytes 17..<128 are 0, sets all three): `fileCorrupted`.
    /// A plain file with some other reserved byte set is still plain: a plain file never reads
    /// those bytes, and opens without a key as it did (`keys(for:key:path:)` says what a key
    /// given for such a file meets).
    package static func kind(of header: [UInt8], path: String) throws(StorageError) -> Kind {
        guard header.count >= plaintextLength else {
            throw StorageError(.invalidDatabase, "the file is too short for a realm header", path: path)
        }
        let format = header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self)) }
        let suite = header[suiteOffset]
        let encryptionFields = EncryptionFields(header)
        if format == unsealedFormatVersion, suite == suiteXTSHMAC, encryptionFields.hasSalt, encryptionFields.hasKeyCheck {
            throw StorageError(.unsupportedFormatVersion, "the file is an encrypted realm of format 5, written by a development build of "
                               + "OpenRealm before refs carried their children's seals; that format was never released and this build "
                               + "does not read it (it cannot detect rolled-back nodes): open it with the build that wrote it and write "
                               + "a decrypted copy with writeCopy(toFile:), then encrypt that copy with this build", path: path)
        }
        if format >= unsealedFormatVersion, format <= formatVersion, suite == 0 {
            throw damaged(encryptionFields.any
                          ? "it names format \(format), which only encrypted files have, and cipher suite 0 (none)"
                          : "it names format \(format), which only encrypted files have, but no cipher suite, salt or key check",
                          path: path)
        }
        if format < unsealedFormatVersion, suite == suiteXTSHMAC, encryptionFields.hasSalt, encryptionFields.hasKeyCheck {
            throw damaged("it names cipher suite \(suite) with a salt and a key check, as only an encrypted file's does, but format \(format), "
                          + "a plain file's", path: path)
        }
        guard format >= formatVersion, suite != 0 else { return .plain }
        guard suite == suiteXTSHMAC else {
            throw StorageError(.unsupportedFormatVersion, "the file is encrypted with cipher suite \(suite), which this build does not know; open it with a newer OpenRealm", path: path)
        }
        return .encrypted(salt: Array(header[saltOffset..<(saltOffset + EncryptionKeys.saltLength)]),
                          keyCheck: Array(header[keyCheckOffset..<(keyCheckOffset + keyCheckLength)]))
    }

    /// The keys for the file whose header begins with `header`, given `key` (nil: opened
    /// without one). Nil for a plain file opened without a key.
    ///
    /// - Throws: `decryptionFailed` when the key does not fit the file: a key for a plain file,
    ///   no key for an encrypted one, or a key whose check does not match (E8); `fileCorrupted`
    ///   for a clear header no undamaged file holds (E9); `invalidArgument` for a key that is
    ///   not 64 bytes.
    package static func keys(for header: [UInt8], key: [UInt8]?, path: String) throws(StorageError) -> EncryptionKeys? {
        if let key { try validate(key) }
        switch try kind(of: header, path: path) {
        case .plain:
            guard let key else { return nil }
            let fields = EncryptionFields(header)
            // A plain header with encryption's fields set, and a key: the salt and the key
            // check fitting the key prove an encrypted file whose format or suite was damaged.
            if fields.hasSalt, fields.hasKeyCheck,
               constantTimeEqual(EncryptionKeys(userKey: key, salt: fields.salt).keyCheck, fields.keyCheck) {
                throw damaged("its salt and key check fit the key given, but its format version or cipher suite says the file is not encrypted",
                              path: path)
            }
            if fields.any || header[suiteOffset] != 0 {
                throw StorageError(.decryptionFailed, "the header says the file is not encrypted, and an encryption key was given, but bytes "
                                   + "only an encrypted header sets are not 0: either a plain file whose header is damaged (open it without "
                                   + "a key) or an encrypted file whose header is damaged (restore it from a backup)", path: path)
            }
            throw StorageError(.decryptionFailed, "the file is not encrypted, and an encryption key was given: open it without a key, or write an encrypted copy with writeCopy(toFile:encryptionKey:)", path: path)
        case .encrypted(let salt, let keyCheck):
            guard let key else {
                throw StorageError(.decryptionFailed, "the file is encrypted: open it with the 64-byte encryptionKey it was written with", path: path)
            }
            let keys = EncryptionKeys(userKey: key, salt: salt)
            guard constantTimeEqual(keys.keyCheck, keyCheck) else {
                throw StorageError(.decryptionFailed, "the encryption key does not match the file: it is not the key the file was written with (another realm's key, or one changed since), or the header's first 128 bytes were damaged", path: path)
            }
            return keys
        }
    }

    /// `keys(for:key:path:)` for the file at `path`, its header read here; nil when no file is
    /// there, or when it does not begin with a realm header (opening it says what it is).
    package static func keys(ofFileAt path: String, key: [UInt8]?) throws(StorageError) -> EncryptionKeys? {
        if let key { try validate(key) }
        let file: PosixFile
        do throws(StorageError) {
            file = try PosixFile(path: path, mode: .readOnly)
        } catch where error.code == .fileNotFound {
            return nil
        }
        return try keys(of: file, key: key, path: path)
    }

    /// `keys(for:key:path:)` for `file`, its first bytes read here; nil when it does not
    /// begin with a realm header (opening it says what it is).
    package static func keys(of file: StorageFile, key: [UInt8]?, path: String) throws(StorageError) -> EncryptionKeys? {
        let header = try file.read(count: plaintextLength, at: 0)
        guard header.count == plaintextLength, Array(header[0..<8]) == FileHeader.magic else { return nil }
        return try keys(for: header, key: key, path: path)
    }

    /// The salt and key check of a header, as read, whatever its format says.
    private struct EncryptionFields {
        let salt: [UInt8]
        let keyCheck: [UInt8]
        init(_ header: [UInt8]) {
            salt = Array(header[saltOffset..<(saltOffset + EncryptionKeys.saltLength)])
            keyCheck = Array(header[keyCheckOffset..<(keyCheckOffset + keyCheckLength)])
        }
        var hasSalt: Bool { salt.contains { $0 != 0 } }
        var hasKeyCheck: Bool { keyCheck.contains { $0 != 0 } }
        var any: Bool { hasSalt || hasKeyCheck }
    }

    /// The error for a clear header that no undamaged file holds (E9).
    private static func damaged(_ why: String, path: String) -> StorageError {
        StorageError(.fileCorrupted, "the encrypted file's header is damaged: \(why). Its first 128 bytes are not authenticated, so "
                     + "nothing of the file can be trusted to be read as it says; restore the file from a backup", path: path)
    }

    /// Throws `invalidArgument` unless `key` is an encryption key's 64 bytes.
    package static func validate(_ key: [UInt8]) throws(StorageError) {
        guard key.count == EncryptionKeys.userKeyLength else {
            throw StorageError(.invalidArgument, "an encryption key is \(EncryptionKeys.userKeyLength) bytes; this one is \(key.count)")
        }
    }

    /// The plaintext part of a new encrypted file's header for `keys` made with `salt`: the
    /// plain header's fields, format 6, the suite, the salt and the key check.
    package static func initial(salt: [UInt8], keys: EncryptionKeys) -> [UInt8] {
        var bytes = FileHeader.initial()
        withUnsafeBytes(of: formatVersion.littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
        bytes[suiteOffset] = suiteXTSHMAC
        bytes.replaceSubrange(saltOffset..<(saltOffset + salt.count), with: salt)
        bytes.replaceSubrange(keyCheckOffset..<(keyCheckOffset + keyCheckLength), with: keys.keyCheck)
        return bytes
    }

    /// Compares two checks (or keys) in time that does not depend on where they differ.
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
