#!/usr/bin/env bash
# What the benchmarks need beyond the tests' packages: wrk (the brief intake's C load generator; without it
# the suite skips those phases and says so). Installs it only when missing, and only as root.
set -euo pipefail
command -v wrk >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != "0" ]; then
  echo "wrk is missing (apt-get install wrk): brief_intake skips its wrk phases" >&2
  exit 0
fi
echo "installing system packages: wrk"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends wrk >/dev/null
