// Small C helpers the storage engine needs and Swift does not offer.
#ifndef OPENREALM_STORAGE_SUPPORT_H
#define OPENREALM_STORAGE_SUPPORT_H

#include <stdint.h>

/// Asks the CPU to start loading the cache line at `address` for reading. A hint only: it
/// never faults, even for an address outside any mapping.
static inline void openrealm_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

/// Sequentially consistent load and store of a 64-bit word another process may touch at
/// the same time (the lock file's shared table, ProcessCoordination.swift). The order they
/// give across processes is what the reader table's argument needs.
static inline uint64_t openrealm_shared_load(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_SEQ_CST);
}

static inline void openrealm_shared_store(void *address, uint64_t value) {
    __atomic_store_n((uint64_t *)address, value, __ATOMIC_SEQ_CST);
}

/// Bit `bit` of the bitmap at `words`, read and set atomically with relaxed ordering: the
/// verified-node bitmap (VerifiedNodes.swift), where a bit only says "these bytes were checked"
/// and the bytes themselves were published to the reader by the version's own ordering.
static inline int openrealm_bit_test(const uint64_t *words, uint64_t bit) {
    return (int)((__atomic_load_n(words + (bit >> 6), __ATOMIC_RELAXED) >> (bit & 63)) & 1);
}

static inline void openrealm_bit_set(uint64_t *words, uint64_t bit) {
    __atomic_fetch_or(words + (bit >> 6), (uint64_t)1 << (bit & 63), __ATOMIC_RELAXED);
}

/// Clears `count` words of that bitmap, each atomically.
static inline void openrealm_bits_clear(uint64_t *words, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) __atomic_store_n(words + i, 0, __ATOMIC_RELAXED);
}

/// Locks bytes `start ..< start + length` of `fd` with an open-file-description lock
/// (F_OFD_SETLK/F_OFD_SETLKW): held per open file, not per process, so two descriptors of one
/// process exclude each other and closing another descriptor of the file releases nothing.
/// `mode`: 0 unlock, 1 shared, 2 exclusive. Returns 0, or the errno (EAGAIN: held elsewhere
/// and `wait` was 0).
int openrealm_range_lock(int fd, int64_t start, int64_t length, int mode, int wait);

/// Whether another open file holds a lock on any of bytes `start ..< start + length` that
/// would conflict with an exclusive lock: 1 yes, 0 no, -errno on failure.
int openrealm_range_is_locked(int fd, int64_t start, int64_t length);

/// Starts writeback of the dirty pages of bytes `start ..< start + length` of `fd` without
/// waiting for it (Linux `sync_file_range` with SYNC_FILE_RANGE_WRITE; nothing elsewhere).
/// A hint: durability still needs fdatasync. Returns 0 or the errno.
int openrealm_start_writeback(int fd, int64_t start, int64_t length);

/// userfaultfd (Linux), for the regions LZ4-compressed copies and encrypted files are read
/// through in place (File/FaultRegion.swift). Each returns 0 or an errno (ENOSYS where there
/// is none).
///
/// Opens a userfaultfd, non-blocking and close-on-exec, with `user_mode_only` asking for
/// UFFD_USER_MODE_ONLY (faults from user code only, which unprivileged processes may ask for
/// where vm.unprivileged_userfaultfd is 0), and negotiates the API.
int openrealm_uffd_open(int user_mode_only, int *out_fd);
/// Registers `length` bytes at `address` (page-aligned, anonymous) for missing-page faults.
int openrealm_uffd_register(int fd, void *address, uint64_t length);
/// Waits for the next page fault on `fd` and stores its address; ECANCELED once `stop_fd`
/// becomes readable.
int openrealm_uffd_next_fault(int fd, int stop_fd, uint64_t *address);
/// Installs `length` bytes from `source` at `destination` (page-aligned) and wakes the threads
/// waiting there; EEXIST when a page of the range is already present.
int openrealm_uffd_copy(int fd, void *destination, const void *source, uint64_t length);
/// Wakes the threads waiting on faults in the range.
int openrealm_uffd_wake(int fd, void *address, uint64_t length);

/// ThreadSanitizer's view of a lock it cannot see (Basics/Locked.swift): on Linux
/// `Synchronization.Mutex` is a futex TSan does not intercept, so it would report every access
/// to the state the mutex guards as a race. Called right after the lock is taken and right
/// before it is let go, with one address per lock; they tell TSan of the happens-before edge
/// the mutex makes. Nothing at all unless this file is compiled with the thread sanitizer
/// (`swift build --sanitize=thread` passes it to C targets too).
void openrealm_tsan_acquire(const void *address);
void openrealm_tsan_release(const void *address);

#endif
