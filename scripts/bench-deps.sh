#!/usr/bin/env bash
# What the benchmarks need beyond the tests' packages: wrk (the brief intake's C load generator; without it
# the suite skips those phases and says so). Installs it only when missing, and only as root.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null 2>&1 && exit 0
. scripts/apt-missing.sh
apt_install_missing wrk || echo "brief_intake skips its wrk phases" >&2
