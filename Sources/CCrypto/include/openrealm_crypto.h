// The engine's thin layer over the system's OpenSSL libcrypto (Debian: libssl-dev), for
// encryption at rest (docs/EncryptionProposal.md). The Swift side is Sources/RealmStorage/Crypto/.
//
// Why it is shaped this way:
// - OpenSSL's headers stay in openrealm_crypto.c: Swift sees only opaque handles and plain
//   integers, so importing this module pulls in no OpenSSL header and no OpenSSL version's macros.
// - The hot calls (a page through AES-256-XTS, a node's HMAC-SHA-256) neither fetch an
//   algorithm nor allocate: a handle fetches its algorithm and keys a template context once,
//   and keeps a pool of contexts copied from it. A call claims a free context with one atomic
//   exchange, only resets its tweak (or re-initialises the MAC with the key it keeps), and
//   gives it back. Implicit fetches (EVP_aes_256_xts() in an Init) and a context per call cost
//   several times the cipher itself in OpenSSL 3.
// - OpenSSL contexts are not thread-safe, so one context serves one call at a time. Each thread
//   remembers the pool slot it last used (the same index in every handle), so threads rarely
//   meet on a slot and a context stays warm in its thread's cache. When every slot is busy (more
//   threads inside calls on one handle than slots) the call copies a temporary context: slower,
//   never wrong.
// - Functions return 1 on success and 0 on failure; openrealm_crypto_error says why.
#ifndef OPENREALM_CRYPTO_H
#define OPENREALM_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// AES-256-XTS with one key: the data units are the caller's (the engine's 4 KiB pages).
typedef struct openrealm_xts openrealm_xts;

/// HMAC-SHA-256 with one key.
typedef struct openrealm_hmac openrealm_hmac;

/// A handle for the 64-byte XTS key (key 1, then key 2) with `contexts` pooled contexts per
/// direction (0: a default from the number of processors). NULL when OpenSSL refuses (the
/// algorithm is missing, or the two key halves are equal).
openrealm_xts *openrealm_xts_create(const uint8_t *key, size_t contexts);
void openrealm_xts_destroy(openrealm_xts *xts);

/// Encrypts (`encrypt` 1) or decrypts (0) `count` bytes of data unit `unit` (the tweak: `unit`
/// little-endian in 16 bytes) from `source` into `destination`, which may be `source` itself
/// but must not otherwise overlap it. `count` is a multiple of 16 and at least 16.
int openrealm_xts_crypt(openrealm_xts *xts, int encrypt, uint64_t unit,
                        const void *source, void *destination, size_t count);

/// A handle for an HMAC-SHA-256 key of any length, with `contexts` pooled contexts (0: a default).
openrealm_hmac *openrealm_hmac_create(const uint8_t *key, size_t length, size_t contexts);
void openrealm_hmac_destroy(openrealm_hmac *hmac);

/// The first 16 bytes of HMAC-SHA-256(key, u64 little-endian `offset` ‖ u8 `kind` ‖ bytes).
int openrealm_hmac_node_tag(openrealm_hmac *hmac, uint64_t offset, uint8_t kind,
                            const void *bytes, size_t count, uint8_t tag[16]);

/// HMAC-SHA-256(key, message) into `mac` (32 bytes), with no handle: for one-off uses.
int openrealm_hmac_sha256(const uint8_t *key, size_t keyLength,
                          const void *message, size_t count, uint8_t mac[32]);

/// HKDF-SHA-256 (RFC 5869, extract then expand) into `output`. `inputKey` must not be empty;
/// `salt` and `info` may be; `info` at most 1,024 bytes and `count` at most 8,160 (255 × 32).
int openrealm_hkdf_sha256(const uint8_t *inputKey, size_t inputKeyLength,
                          const uint8_t *salt, size_t saltLength,
                          const uint8_t *info, size_t infoLength,
                          uint8_t *output, size_t count);

/// Writes zeros over `count` bytes at `bytes` in a way the compiler may not remove as a dead
/// store (OPENSSL_cleanse): for key material about to be released.
///
/// What needs no call: every OpenSSL context here is freed with EVP_CIPHER_CTX_free,
/// EVP_MAC_CTX_free or EVP_KDF_CTX_free, and OpenSSL 3's providers clear their key schedules,
/// HMAC keys and HKDF inputs as they free them (OPENSSL_clear_free).
void openrealm_cleanse(void *bytes, size_t count);

/// `count` bytes from OpenSSL's CSPRNG (RAND_bytes).
int openrealm_random_bytes(uint8_t *output, size_t count);

/// The oldest error OpenSSL queued on this thread, as text in `buffer` (NUL-terminated), and
/// clears the queue. "no OpenSSL error" when there is none.
void openrealm_crypto_error(char *buffer, size_t capacity);

#endif
