#!/usr/bin/env bash
# System packages the integration tests need (Varnish with xkey, Chromium), and axe-core from npm for the
# dashboard's accessibility check (tests/dashboard/axe, pinned by its package-lock.json).
# Installs only what is missing, and system packages only as root (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."
axe=tests/dashboard/axe
if [ ! -e "$axe/node_modules/.package-lock.json" ] || ! cmp -s <(sed -n '/"node_modules\/axe-core"/,/}/p' "$axe/package-lock.json") \
     <(sed -n '/"node_modules\/axe-core"/,/}/p' "$axe/node_modules/.package-lock.json"); then
  command -v npm >/dev/null 2>&1 || { echo "npm is missing (Node 20 + npm): needed for axe-core in $axe" >&2; exit 1; }
  echo "installing axe-core (npm ci in $axe)"
  npm ci --prefix "$axe" --no-audit --no-fund --loglevel=error
fi
need=()
command -v varnishd >/dev/null 2>&1 || need+=(varnish)
[ -e /usr/lib/x86_64-linux-gnu/varnish/vmods/libvmod_xkey.so ] || ls /usr/lib/*/varnish/vmods/libvmod_xkey.so >/dev/null 2>&1 || need+=(varnish-modules)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
. scripts/apt-missing.sh
apt_install_missing ${need[@]+"${need[@]}"}
