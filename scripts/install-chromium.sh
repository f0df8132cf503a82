#!/bin/sh
# Installs headless Chromium for the progress page's browser test
# (pkg/progress). Debian/Ubuntu only; run as root (CI runs it via the Makefile).
set -eu
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
	echo "chromium already installed: $(command -v chromium || echo /usr/bin/chromium)"
	exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# Fonts so text renders the same everywhere; chromium itself.
$SUDO apt-get install -y --no-install-recommends chromium fonts-dejavu-core
chromium --version
