// Most helpers are static inline functions in the header; the locks live here because they
// need the feature macros that expose the open-file-description lock commands.
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
