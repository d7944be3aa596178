// The helpers are static inline functions in the header; this file gives the target a source.
#include "storage_support.h"
