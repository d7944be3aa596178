// Small C helpers the storage engine needs and Swift does not offer.
#ifndef OPENREALM_STORAGE_SUPPORT_H
#define OPENREALM_STORAGE_SUPPORT_H

/// Asks the CPU to start loading the cache line at `address` for reading. A hint only: it
/// never faults, even for an address outside any mapping.
static inline void openrealm_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
