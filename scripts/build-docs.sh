#!/usr/bin/env bash
# Builds OpenRealm's documentation (the DocC catalogue Sources/OpenRealm/OpenRealm.docc and the
# doc comments of the public API) with warnings treated as errors: a link to a symbol or an
# article that does not exist, or a documented parameter the function lacks, fails the build.
# The archive goes to .build/plugins/Swift-DocC/outputs/OpenRealm.doccarchive.
#
# Extra arguments go to docc, e.g. the public symbols without documentation:
#   scripts/build-docs.sh --experimental-documentation-coverage --coverage-summary-level brief
#
# .ci/run calls it after the debug tests, whose build it reuses (16-30 s then).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-prerequisites.sh
swift package generate-documentation --target OpenRealm --warnings-as-errors "$@"
