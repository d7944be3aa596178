// Entry points of the Swift runtime that Swift itself does not offer.
#ifndef OPENREALM_SWIFT_RUNTIME_H
#define OPENREALM_SWIFT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

// The runtime's HeapObject.h (not installed with the toolchain) declares it: the object, now
// retained once more, or NULL when its deinit has begun.
extern void *swift_tryRetain(void *object);

/// Takes a strong reference to the Swift object at `object` unless its deinit has begun, in
/// one atomic step: true, and the caller owns a +1 it must release; false, and nothing was
/// taken. `object` must not have been freed, which is the caller's to ensure (a lock its
/// deinit takes). The runtime's own entry point, exported by libswiftCore with the C calling
/// convention; weak references use the same check, but give the object a side table.
static inline bool openrealm_try_retain(void *object) {
    return swift_tryRetain(object) != NULL;
}

// The concurrency runtime's current task (libswift_Concurrency): the task running on this
// thread, not retained, or NULL outside any task. Declared there with the Swift calling
// convention, which for a function without parameters (no self, error or async context
// register to pass) returns in the same register and saves the same registers as C's.
extern void *swift_task_getCurrent(void);

/// The address of the task running on this thread, or NULL: one thread-local read, where
/// `withUnsafeCurrentTask` also retains and releases the task.
static inline void *openrealm_current_task(void) {
    return swift_task_getCurrent();
}

#endif
