// The Swift runtime's reference counting entry point that Swift itself does not offer.
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

#endif
