// Thin functions over OpenSSL 3's EVP interface; why they are shaped so is in
// include/openrealm_crypto.h. No cipher or MAC is implemented here: every byte of cryptography
// is OpenSSL's.
#include "openrealm_crypto.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

// MARK: - The context pool

// One pooled context (two for XTS: one per direction, since their key schedules differ). On a
// cache line of its own, so that threads claiming neighbouring slots do not share a line.
// `busy` is the claim: taken with an acquire exchange, given back with a release store, so the
// contexts (created lazily by the claimer) are only ever touched by one thread at a time and
// each claimer sees what the previous one left.
typedef struct {
    _Alignas(64) atomic_int busy;
    void *context[2];
} pool_slot;

// The slot index each thread tries first: assigned round-robin the first time a thread calls,
// then moved to wherever it last found a free slot. Per thread, not per handle, so that one
// thread keeps to one slot index in every handle.
static atomic_uint next_home;
static _Thread_local unsigned home_plus_one;

static size_t default_slot_count(void) {
    long processors = sysconf(_SC_NPROCESSORS_ONLN);
    if (processors < 4) processors = 4;
    if (processors > 128) processors = 128;
    return (size_t)processors * 2;
}

// The slot claimed, or NULL when all are busy.
static pool_slot *claim(pool_slot *slots, size_t count) {
    if (home_plus_one == 0) {
        home_plus_one = atomic_fetch_add_explicit(&next_home, 1, memory_order_relaxed) + 1;
    }
    size_t home = (size_t)(home_plus_one - 1) % count;
    for (size_t i = 0; i < count; i++) {
        size_t index = home + i < count ? home + i : home + i - count;
        pool_slot *slot = &slots[index];
        // A relaxed look first, so that a busy slot's line is not written by the exchange.
        if (atomic_load_explicit(&slot->busy, memory_order_relaxed) == 0
            && atomic_exchange_explicit(&slot->busy, 1, memory_order_acquire) == 0) {
            if (i != 0) home_plus_one = (unsigned)index + 1;
            return slot;
        }
    }
    return NULL;
}

static void give_back(pool_slot *slot) {
    atomic_store_explicit(&slot->busy, 0, memory_order_release);
}

static pool_slot *new_slots(size_t count) {
    pool_slot *slots = aligned_alloc(64, count * sizeof(pool_slot));
    if (slots == NULL) return NULL;
    for (size_t i = 0; i < count; i++) {
        atomic_init(&slots[i].busy, 0);
        slots[i].context[0] = NULL;
        slots[i].context[1] = NULL;
    }
    return slots;
}

// MARK: - AES-256-XTS

struct openrealm_xts {
    EVP_CIPHER *cipher;
    // Keyed once at creation; the pool's contexts are copies (EVP_CIPHER_CTX_copy duplicates the
    // key schedule without the key). Only read after creation, by any number of threads.
    EVP_CIPHER_CTX *template[2]; // 0 encrypts, 1 decrypts
    size_t slot_count;
    pool_slot *slots;
};

static EVP_CIPHER_CTX *xts_copy(const EVP_CIPHER_CTX *template) {
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context != NULL && EVP_CIPHER_CTX_copy(context, template) != 1) {
        EVP_CIPHER_CTX_free(context);
        return NULL;
    }
    return context;
}

openrealm_xts *openrealm_xts_create(const uint8_t *key, size_t contexts) {
    openrealm_xts *xts = calloc(1, sizeof *xts);
    if (xts == NULL) return NULL;
    xts->slot_count = contexts != 0 ? contexts : default_slot_count();
    static const unsigned char zero_tweak[16] = {0};
    xts->cipher = EVP_CIPHER_fetch(NULL, "AES-256-XTS", NULL);
    xts->template[0] = EVP_CIPHER_CTX_new();
    xts->template[1] = EVP_CIPHER_CTX_new();
    xts->slots = new_slots(xts->slot_count);
    if (xts->cipher == NULL || xts->template[0] == NULL || xts->template[1] == NULL
        || xts->slots == NULL
        || EVP_EncryptInit_ex2(xts->template[0], xts->cipher, key, zero_tweak, NULL) != 1
        || EVP_DecryptInit_ex2(xts->template[1], xts->cipher, key, zero_tweak, NULL) != 1) {
        openrealm_xts_destroy(xts);
        return NULL;
    }
    return xts;
}

void openrealm_xts_destroy(openrealm_xts *xts) {
    if (xts == NULL) return;
    if (xts->slots != NULL) {
        for (size_t i = 0; i < xts->slot_count; i++) {
            EVP_CIPHER_CTX_free(xts->slots[i].context[0]);
            EVP_CIPHER_CTX_free(xts->slots[i].context[1]);
        }
        free(xts->slots);
    }
    EVP_CIPHER_CTX_free(xts->template[0]);
    EVP_CIPHER_CTX_free(xts->template[1]);
    EVP_CIPHER_free(xts->cipher);
    free(xts);
}

int openrealm_xts_crypt(openrealm_xts *xts, int encrypt, uint64_t unit,
                        const void *source, void *destination, size_t count) {
    if (count < 16 || count % 16 != 0 || count > INT_MAX) return 0;
    unsigned char tweak[16] = {0};
    for (int i = 0; i < 8; i++) tweak[i] = (unsigned char)(unit >> (8 * i));
    int direction = encrypt ? 0 : 1;
    pool_slot *slot = claim(xts->slots, xts->slot_count);
    EVP_CIPHER_CTX *context;
    if (slot != NULL) {
        context = slot->context[direction];
        if (context == NULL) {
            context = xts_copy(xts->template[direction]);
            slot->context[direction] = context;
        }
    } else {
        context = xts_copy(xts->template[direction]);
    }
    int length = 0;
    // A NULL cipher and key keep the context's: only the tweak is set, no fetch, no key schedule.
    int ok = context != NULL
        && EVP_CipherInit_ex2(context, NULL, NULL, tweak, encrypt ? 1 : 0, NULL) == 1
        && EVP_CipherUpdate(context, destination, &length, source, (int)count) == 1
        && (size_t)length == count;
    if (slot != NULL) give_back(slot); else EVP_CIPHER_CTX_free(context);
    return ok;
}

// MARK: - HMAC-SHA-256

struct openrealm_hmac {
    EVP_MAC *mac;
    EVP_MAC_CTX *template; // keyed once; the pool's contexts are EVP_MAC_CTX_dup copies
    size_t slot_count;
    pool_slot *slots;
};

openrealm_hmac *openrealm_hmac_create(const uint8_t *key, size_t length, size_t contexts) {
    openrealm_hmac *hmac = calloc(1, sizeof *hmac);
    if (hmac == NULL) return NULL;
    hmac->slot_count = contexts != 0 ? contexts : default_slot_count();
    static const uint8_t empty = 0;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
        OSSL_PARAM_construct_end(),
    };
    hmac->mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    hmac->template = hmac->mac != NULL ? EVP_MAC_CTX_new(hmac->mac) : NULL;
    hmac->slots = new_slots(hmac->slot_count);
    if (hmac->template == NULL || hmac->slots == NULL
        || EVP_MAC_init(hmac->template, key != NULL ? key : &empty, length, params) != 1) {
        openrealm_hmac_destroy(hmac);
        return NULL;
    }
    return hmac;
}

void openrealm_hmac_destroy(openrealm_hmac *hmac) {
    if (hmac == NULL) return;
    if (hmac->slots != NULL) {
        for (size_t i = 0; i < hmac->slot_count; i++) EVP_MAC_CTX_free(hmac->slots[i].context[0]);
        free(hmac->slots);
    }
    EVP_MAC_CTX_free(hmac->template);
    EVP_MAC_free(hmac->mac);
    free(hmac);
}

int openrealm_hmac_node_tag(openrealm_hmac *hmac, uint64_t offset, uint8_t kind,
                            const void *bytes, size_t count, uint8_t tag[16]) {
    unsigned char prefix[9];
    for (int i = 0; i < 8; i++) prefix[i] = (unsigned char)(offset >> (8 * i));
    prefix[8] = kind;
    pool_slot *slot = claim(hmac->slots, hmac->slot_count);
    EVP_MAC_CTX *context;
    if (slot != NULL) {
        context = slot->context[0];
        if (context == NULL) {
            context = EVP_MAC_CTX_dup(hmac->template);
            slot->context[0] = context;
        }
    } else {
        context = EVP_MAC_CTX_dup(hmac->template);
    }
    unsigned char full[32];
    size_t length = 0;
    // EVP_MAC_init with no key restarts the MAC with the key the context holds.
    int ok = context != NULL
        && EVP_MAC_init(context, NULL, 0, NULL) == 1
        && EVP_MAC_update(context, prefix, sizeof prefix) == 1
        && (count == 0 || EVP_MAC_update(context, bytes, count) == 1)
        && EVP_MAC_final(context, full, &length, sizeof full) == 1
        && length == sizeof full;
    if (slot != NULL) give_back(slot); else EVP_MAC_CTX_free(context);
    if (ok) memcpy(tag, full, 16);
    return ok;
}

int openrealm_hmac_sha256(const uint8_t *key, size_t keyLength,
                          const void *message, size_t count, uint8_t mac[32]) {
    static const uint8_t empty = 0;
    size_t length = 0;
    unsigned char *result = EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL,
                                      key != NULL ? key : &empty, keyLength,
                                      message != NULL ? message : &empty, count,
                                      mac, 32, &length);
    return result != NULL && length == 32;
}

// MARK: - HKDF-SHA-256

int openrealm_hkdf_sha256(const uint8_t *inputKey, size_t inputKeyLength,
                          const uint8_t *salt, size_t saltLength,
                          const uint8_t *info, size_t infoLength,
                          uint8_t *output, size_t count) {
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
    EVP_KDF_CTX *context = kdf != NULL ? EVP_KDF_CTX_new(kdf) : NULL;
    EVP_KDF_free(kdf);
    if (context == NULL) return 0;
    OSSL_PARAM params[5];
    OSSL_PARAM *next = params;
    *next++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    *next++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)inputKey, inputKeyLength);
    // An absent salt is HashLen zero bytes (RFC 5869 2.2), which OpenSSL does for a missing one.
    if (saltLength != 0) {
        *next++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, saltLength);
    }
    if (infoLength != 0) {
        *next++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, infoLength);
    }
    *next = OSSL_PARAM_construct_end();
    int ok = EVP_KDF_derive(context, output, count, params) == 1;
    EVP_KDF_CTX_free(context);
    return ok;
}

// MARK: - Wiping

void openrealm_cleanse(void *bytes, size_t count) {
    if (bytes != NULL && count != 0) OPENSSL_cleanse(bytes, count);
}

// MARK: - Randomness and errors

int openrealm_random_bytes(uint8_t *output, size_t count) {
    while (count > 0) {
        int chunk = count > (1u << 30) ? (1 << 30) : (int)count;
        if (RAND_bytes(output, chunk) != 1) return 0;
        output += chunk;
        count -= (size_t)chunk;
    }
    return 1;
}

void openrealm_crypto_error(char *buffer, size_t capacity) {
    if (capacity == 0) return;
    unsigned long code = ERR_get_error();
    if (code == 0) {
        snprintf(buffer, capacity, "no OpenSSL error");
    } else {
        ERR_error_string_n(code, buffer, capacity);
    }
    ERR_clear_error();
}
