#include "swift_runtime.h"

#include <stddef.h>

// The runtime's HeapObject.h (not installed with the toolchain) declares it: the object, now
// retained once more, or NULL when its deinit has begun.
extern void *swift_tryRetain(void *object);

bool openrealm_try_retain(void *object) {
    return swift_tryRetain(object) != NULL;
}
