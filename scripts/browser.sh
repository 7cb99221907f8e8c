#!/bin/sh
# Installs the headless browser the graph page is tested in (Debian's chromium), if missing.
set -eu
for b in chromium chromium-browser google-chrome; do
  if command -v "$b" >/dev/null 2>&1; then echo "browser: $(command -v "$b")"; exit 0; fi
done
if [ "$(id -u)" = 0 ]; then SUDO=; elif command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
  echo "chromium is missing and this user cannot install it (apt-get install chromium)" >&2; exit 1
fi
$SUDO apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium >/dev/null
echo "browser: $(command -v chromium)"
