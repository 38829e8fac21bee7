#!/usr/bin/env bash
# System packages the integration tests need (Varnish with xkey, Chromium).
# Installs only what is missing, and only as root (CI runs as root).
set -euo pipefail
need=()
command -v varnishd >/dev/null 2>&1 || need+=(varnish)
[ -e /usr/lib/x86_64-linux-gnu/varnish/vmods/libvmod_xkey.so ] || ls /usr/lib/*/varnish/vmods/libvmod_xkey.so >/dev/null 2>&1 || need+=(varnish-modules)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "missing system packages: ${need[*]} (run as root or install them: apt-get install ${need[*]})" >&2
  exit 1
fi
echo "installing system packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
