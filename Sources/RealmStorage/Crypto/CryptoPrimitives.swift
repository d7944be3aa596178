import CCrypto

// The one-off primitives of encryption at rest (docs/EncryptionProposal.md §4): HMAC for the
// key check, HKDF for the file's keys, random bytes for its salt. They run once per open or
// per new file, so they take arrays and may allocate; the per-page and per-node work is in
// PageCipher.swift and NodeAuthenticator.swift. All cryptography is OpenSSL's (CCrypto).

/// HMAC-SHA-256 (RFC 2104), one message at a time.
package enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key` (any length).
    package static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 32)
        let ok = key.withUnsafeBufferPointer { key in
            message.withUnsafeBufferPointer { message in
                mac.withUnsafeMutableBufferPointer { mac in
                    openrealm_hmac_sha256(key.baseAddress, key.count, message.baseAddress, message.count, mac.baseAddress)
                }
            }
        }
        if ok != 1 { cryptoFailure("HMAC-SHA-256") }
        return mac
    }
}

/// HKDF with SHA-256 (RFC 5869): extract with `salt`, then expand with `info`.
package enum HKDFSHA256 {
    /// `count` bytes of key material. `inputKey` must not be empty (OpenSSL refuses an empty
    /// one); `salt` and `info` may be. `info` is at most 1,024 bytes (OpenSSL's limit) and
    /// `count` at most 255 × 32 (RFC 5869's).
    package static func derive(inputKey: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        precondition(!inputKey.isEmpty, "HKDF-SHA-256 needs a non-empty input key")
        precondition(info.count <= 1024, "HKDF-SHA-256 info is at most 1,024 bytes here")
        precondition(count > 0 && count <= 255 * 32, "HKDF-SHA-256 derives 1 to 8,160 bytes")
        var output = [UInt8](repeating: 0, count: count)
        let ok = inputKey.withUnsafeBufferPointer { inputKey in
            salt.withUnsafeBufferPointer { salt in
                info.withUnsafeBufferPointer { info in
                    output.withUnsafeMutableBufferPointer { output in
                        openrealm_hkdf_sha256(
                            inputKey.baseAddress, inputKey.count, salt.baseAddress, salt.count,
                            info.baseAddress, info.count, output.baseAddress, output.count)
                    }
                }
            }
        }
        if ok != 1 { cryptoFailure("HKDF-SHA-256") }
        return output
    }
}

/// Bytes from OpenSSL's CSPRNG (RAND_bytes, seeded from the kernel's getrandom).
package enum SecureRandom {
    /// `count` random bytes.
    /// - Throws: `ioFailure` when the generator cannot produce them (no entropy source): unlike
    ///   the ciphers it depends on the system at run time, so it fails as an I/O would.
    package static func bytes(_ count: Int) throws(StorageError) -> [UInt8] {
        precondition(count >= 0, "a negative count of random bytes")
        var output = [UInt8](repeating: 0, count: count)
        if count == 0 { return output }
        let ok = output.withUnsafeMutableBufferPointer { openrealm_random_bytes($0.baseAddress, $0.count) }
        if ok != 1 {
            throw StorageError(.ioFailure, "the system's random number generator failed: \(openSSLError())")
        }
        return output
    }
}

/// Writes zeros over `bytes` (OPENSSL_cleanse, which the compiler may not drop as a dead
/// store) and leaves it empty: for key material this code made and is done with.
///
/// What it can reach: the array's own buffer when `bytes` is its only holder, as the locals
/// that hold derived keys here are. An array value whose buffer is shared is copied before it
/// is written (Swift's copy on write), so the other holders' bytes stay as they were: the
/// user's key in `Realm.Configuration.encryptionKey` (a `Data`), the `[UInt8]` copies of it in
/// `StoreOptions` (kept by an open `Store` to compare later openers' keys) and in callers, and
/// copies the optimizer or a reallocation left behind, are not wiped. The keys OpenSSL holds
/// (PageCipher, NodeAuthenticator) are cleared by OpenSSL as it frees them.
package func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { openrealm_cleanse($0.baseAddress, $0.count) }
    bytes = []
}

/// The oldest error OpenSSL queued on this thread, as text, and clears the queue.
func openSSLError() -> String {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
        openrealm_crypto_error(buffer.baseAddress, buffer.count)
        return String(cString: buffer.baseAddress!)
    }
}

/// Stops the process when OpenSSL fails an operation whose arguments the caller checked.
///
/// Why a trap and not an error: with valid lengths and a successfully created key, AES-XTS,
/// HMAC and HKDF have no failure mode of their own. OpenSSL then fails only when the process
/// is broken (memory exhausted while copying a context, a provider missing or unloaded), and a
/// page that silently stayed plaintext, or a node with no MAC, would be worse than stopping.
func cryptoFailure(_ operation: String) -> Never {
    fatalError("OpenSSL failed \(operation) with valid arguments (a broken libcrypto installation?): \(openSSLError())")
}
