// Everything is inline in the header; SwiftPM needs a source file for the target.
#include "swift_runtime.h"
