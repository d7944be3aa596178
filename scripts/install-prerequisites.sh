#!/usr/bin/env bash
# Installs what building OpenRealm needs beyond Swift: the liblz4 headers (and pkg-config,
# which SwiftPM uses to find them). Does nothing when they are already there.
set -euo pipefail
if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists liblz4; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq liblz4-dev pkg-config >/dev/null
