// The header of an encrypted realm file (format 5; docs/EncryptionProposal.md).
//
// An encrypted file keeps the first 128 bytes of its header page in the clear, so that any
// build can tell what the file is before it holds a key, and encrypts everything else:
//
//   offset  size  field (plaintext)
//   0       8     magic "ORealm\0\u{1}", as every realm file: a build that knows only format 4
//                 stops at the format version and says that a newer OpenRealm wrote the file
//   8       4     format version (5)
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

/// What the first bytes of a realm file say about its encryption.
package enum EncryptionHeader {
    /// The format of encrypted files. Plain files stay at `FileHeader.formatVersion`.
    package static let formatVersion: UInt32 = 5
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
    package static func kind(of header: [UInt8], path: String) throws(StorageError) -> Kind {
        guard header.count >= plaintextLength else {
            throw StorageError(.invalidDatabase, "the file is too short for a realm header", path: path)
        }
        let format = header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self)) }
        let suite = header[suiteOffset]
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
    ///   no key for an encrypted one, or a key whose check does not match (E8); `invalidArgument`
    ///   for a key that is not 64 bytes.
    package static func keys(for header: [UInt8], key: [UInt8]?, path: String) throws(StorageError) -> EncryptionKeys? {
        if let key { try validate(key) }
        switch try kind(of: header, path: path) {
        case .plain:
            guard key == nil else {
                throw StorageError(.decryptionFailed, "the file is not encrypted, and an encryption key was given: open it without a key, or write an encrypted copy with writeCopy(toFile:encryptionKey:)", path: path)
            }
            return nil
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

    /// Throws `invalidArgument` unless `key` is an encryption key's 64 bytes.
    package static func validate(_ key: [UInt8]) throws(StorageError) {
        guard key.count == EncryptionKeys.userKeyLength else {
            throw StorageError(.invalidArgument, "an encryption key is \(EncryptionKeys.userKeyLength) bytes; this one is \(key.count)")
        }
    }

    /// The plaintext part of a new encrypted file's header for `keys` made with `salt`: the
    /// plain header's fields, format 5, the suite, the salt and the key check.
    package static func initial(salt: [UInt8], keys: EncryptionKeys) -> [UInt8] {
        var bytes = FileHeader.initial()
        withUnsafeBytes(of: formatVersion.littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
        bytes[suiteOffset] = suiteXTSHMAC
        bytes.replaceSubrange(saltOffset..<(saltOffset + salt.count), with: salt)
        bytes.replaceSubrange(keyCheckOffset..<(keyCheckOffset + keyCheckLength), with: keys.keyCheck)
        return bytes
    }

    /// Compares two checks in time that does not depend on where they differ.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
