#!/bin/sh
# System packages the test suite needs on a fresh Debian 12 machine: the libraries PyQt6
# (the svgloo viewer) needs under QT_QPA_PLATFORM=offscreen (EGL/GL, xkbcommon,
# fontconfig/freetype, D-Bus, GLib, X11 client library linked by QtGui), one font so text
# renders, and Debian's chromium: the real browser that referees svgloo's removal proofs
# (tests/browser.py; under CI=true those tests fail rather than skip without it).
# Installs only what is missing; a no-op (no apt-get at all) when everything is present.
# Run as root.
set -eu

PACKAGES="libegl1 libgl1 libxkbcommon0 libfontconfig1 libfreetype6 libdbus-1-3 libglib2.0-0 libx11-6 fonts-dejavu-core chromium"

missing=""
for pkg in $PACKAGES; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    case "$status" in
        *"install ok installed"*) ;;
        *) missing="$missing $pkg" ;;
    esac
done

if [ -z "$missing" ]; then
    echo "ci-system-deps: Qt system libraries and chromium already present"
    exit 0
fi
echo "ci-system-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing
