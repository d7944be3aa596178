#!/usr/bin/env bash
# Installs what building OpenRealm needs beyond Swift: the liblz4 headers (and pkg-config,
# which SwiftPM uses to find them), OpenSSL's libcrypto headers (libssl-dev, for encryption at
# rest: Sources/CCrypto), curl, with which Examples/ci.sh drives the example HTTP service, and
# chromium, the headless browser the web view's tests load its pages in
# (Tests/OpenRealmWebViewTests/BrowserTests.swift). Does nothing when they are already there.
# Another apt-get or dpkg holding the package manager's lock (a fresh VM's unattended upgrades)
# is waited for, up to ten minutes, instead of failing the run.
set -euo pipefail
MISSING=()
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists liblz4; then
    MISSING+=(liblz4-dev pkg-config)
fi
# libcrypto.pc comes with libssl-dev, so pkg-config tells whether its headers are there too.
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists libcrypto; then
    MISSING+=(libssl-dev pkg-config)
fi
if ! command -v curl >/dev/null 2>&1; then
    MISSING+=(curl)
fi
if ! command -v chromium >/dev/null 2>&1; then
    MISSING+=(chromium)
fi
if [ "${#MISSING[@]}" -eq 0 ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
WAIT=(-o DPkg::Lock::Timeout=600)
echo "install-prerequisites: installing ${MISSING[*]} with apt-get (waits for a held package lock)" >&2
$SUDO apt-get "${WAIT[@]}" update -qq
$SUDO apt-get "${WAIT[@]}" install -y -qq "${MISSING[@]}" >/dev/null
echo "install-prerequisites: done" >&2
