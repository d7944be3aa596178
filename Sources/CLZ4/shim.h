// The system liblz4 (Debian: liblz4-dev), used for compressed copies of realm files.
#include <lz4.h>
#include <lz4hc.h>
