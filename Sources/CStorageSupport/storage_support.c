// Most helpers are static inline functions in the header; the locks live here because they
// need the feature macros that expose the open-file-description lock commands, and the TSan
// annotations because only this file is compiled with the sanitizer's flags (the header's
// inline functions are compiled into the Swift module, where `__has_feature` does not say).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include "storage_support.h"

static void describe(struct flock *lock, int64_t start, int64_t length, short type) {
    memset(lock, 0, sizeof *lock);
    lock->l_type = type;
    lock->l_whence = SEEK_SET;
    lock->l_start = start;
    lock->l_len = length;
    lock->l_pid = 0;  // required for F_OFD_* commands
}

int openrealm_range_lock(int fd, int64_t start, int64_t length, int mode, int wait) {
    struct flock lock;
    describe(&lock, start, length, mode == 0 ? F_UNLCK : (mode == 1 ? F_RDLCK : F_WRLCK));
    for (;;) {
        if (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock) == 0) return 0;
        if (errno == EINTR) continue;
        return errno == EACCES ? EAGAIN : errno;
    }
}

int openrealm_range_is_locked(int fd, int64_t start, int64_t length) {
    struct flock lock;
    describe(&lock, start, length, F_WRLCK);
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -errno;
    return lock.l_type == F_UNLCK ? 0 : 1;
}

int openrealm_start_writeback(int fd, int64_t start, int64_t length) {
#ifdef __linux__
    return sync_file_range(fd, start, length, SYNC_FILE_RANGE_WRITE) == 0 ? 0 : errno;
#else
    (void)fd; (void)start; (void)length;
    return 0;
#endif
}

// userfaultfd: the regions LZ4-compressed copies and encrypted files are read through in place
// (File/FaultRegion.swift).
// Thin wrappers only: ioctl is variadic, which Swift cannot call, and the structs are easier
// to fill here. Every function returns 0 or an errno; nothing here allocates.
#ifdef __linux__
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int openrealm_uffd_open(int user_mode_only, int *out_fd) {
#ifdef SYS_userfaultfd
    int flags = O_CLOEXEC | O_NONBLOCK;
#ifdef UFFD_USER_MODE_ONLY
    if (user_mode_only) flags |= UFFD_USER_MODE_ONLY;
#else
    if (user_mode_only) return EINVAL;
#endif
    int fd = (int)syscall(SYS_userfaultfd, flags);
    if (fd < 0) return errno;
    struct uffdio_api api;
    memset(&api, 0, sizeof api);
    api.api = UFFD_API;
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        int err = errno;
        close(fd);
        return err;
    }
    *out_fd = fd;
    return 0;
#else
    (void)user_mode_only; (void)out_fd;
    return ENOSYS;
#endif
}

int openrealm_uffd_register(int fd, void *address, uint64_t length) {
    struct uffdio_register reg;
    memset(&reg, 0, sizeof reg);
    reg.range.start = (uint64_t)(uintptr_t)address;
    reg.range.len = length;
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (ioctl(fd, UFFDIO_REGISTER, &reg) != 0) return errno;
    if (!(reg.ioctls & ((uint64_t)1 << _UFFDIO_COPY))) return ENOTSUP;
    return 0;
}

int openrealm_uffd_next_fault(int fd, int stop_fd, uint64_t *address) {
    // Faults come in bursts (a lookup touches a few blocks in a row): look for the next one a
    // few times before sleeping in poll, whose wake-up costs more than a block's decompression
    // on a busy machine. A bounded spin: about 64 non-blocking reads.
    for (int spin = 0; spin < 64; spin++) {
        struct uffd_msg msg;
        ssize_t n = read(fd, &msg, sizeof msg);
        if (n == sizeof msg && msg.event == UFFD_EVENT_PAGEFAULT) {
            *address = msg.arg.pagefault.address;
            return 0;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR) break;
    }
    for (;;) {
        struct pollfd fds[2] = {{.fd = fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (fds[1].revents) return ECANCELED;
        struct uffd_msg msg;
        ssize_t n = read(fd, &msg, sizeof msg);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) continue;
            return errno;
        }
        if (n != sizeof msg) return EIO;
        if (msg.event != UFFD_EVENT_PAGEFAULT) continue;
        *address = msg.arg.pagefault.address;
        return 0;
    }
}

int openrealm_uffd_copy(int fd, void *destination, const void *source, uint64_t length) {
    struct uffdio_copy copy;
    memset(&copy, 0, sizeof copy);
    copy.dst = (uint64_t)(uintptr_t)destination;
    copy.src = (uint64_t)(uintptr_t)source;
    copy.len = length;
    for (;;) {
        if (ioctl(fd, UFFDIO_COPY, &copy) == 0) return 0;
        if (errno == EAGAIN && copy.copy > 0 && (uint64_t)copy.copy < copy.len) {
            // A partial copy: go on from where it stopped.
            copy.dst += (uint64_t)copy.copy;
            copy.src += (uint64_t)copy.copy;
            copy.len -= (uint64_t)copy.copy;
            copy.copy = 0;
            continue;
        }
        if (errno == EAGAIN) continue;
        return errno;
    }
}

int openrealm_uffd_wake(int fd, void *address, uint64_t length) {
    struct uffdio_range range = {.start = (uint64_t)(uintptr_t)address, .len = length};
    return ioctl(fd, UFFDIO_WAKE, &range) == 0 ? 0 : errno;
}
#else
int openrealm_uffd_open(int user_mode_only, int *out_fd) { (void)user_mode_only; (void)out_fd; return ENOSYS; }
int openrealm_uffd_register(int fd, void *address, uint64_t length) { (void)fd; (void)address; (void)length; return ENOSYS; }
int openrealm_uffd_next_fault(int fd, int stop_fd, uint64_t *address) { (void)fd; (void)stop_fd; (void)address; return ENOSYS; }
int openrealm_uffd_copy(int fd, void *destination, const void *source, uint64_t length) { (void)fd; (void)destination; (void)source; (void)length; return ENOSYS; }
int openrealm_uffd_wake(int fd, void *address, uint64_t length) { (void)fd; (void)address; (void)length; return ENOSYS; }
#endif

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPENREALM_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define OPENREALM_TSAN 1
#endif

#ifdef OPENREALM_TSAN
// The TSan runtime's own annotation entry points (compiler-rt, tsan_interface.h).
void __tsan_acquire(void *address);
void __tsan_release(void *address);

void openrealm_tsan_acquire(const void *address) { __tsan_acquire((void *)address); }
void openrealm_tsan_release(const void *address) { __tsan_release((void *)address); }
#else
void openrealm_tsan_acquire(const void *address) { (void)address; }
void openrealm_tsan_release(const void *address) { (void)address; }
#endif
