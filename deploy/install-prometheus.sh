#!/usr/bin/env bash
# Installs Prometheus (Debian's package) for the dashboard test in deploy/grafanatest,
# only when no prometheus binary is on the PATH. Idempotent; needs root (or sudo) and apt.
set -euo pipefail

if command -v prometheus >/dev/null 2>&1; then
  echo "prometheus already installed: $(command -v prometheus)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# --no-install-recommends keeps out the node exporter and friends; the package's service
# is not started in containers (policy-rc.d), and the test runs its own instance anyway.
$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus
prometheus --version 2>&1 | head -n 1
