#!/usr/bin/env bash
# Installs what building OpenRealm needs beyond Swift: the liblz4 headers (and pkg-config,
# which SwiftPM uses to find them). Does nothing when they are already there. Another
# apt-get or dpkg holding the package manager's lock (a fresh VM's unattended upgrades) is
# waited for, up to ten minutes, instead of failing the run.
set -euo pipefail
if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists liblz4; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
WAIT=(-o DPkg::Lock::Timeout=600)
echo "install-prerequisites: installing liblz4-dev and pkg-config with apt-get (waits for a held package lock)" >&2
$SUDO apt-get "${WAIT[@]}" update -qq
$SUDO apt-get "${WAIT[@]}" install -y -qq liblz4-dev pkg-config >/dev/null
echo "install-prerequisites: done" >&2
