# Sourced by system-deps.sh and bench-deps.sh: apt_install_missing PKG... installs the Debian packages given,
# as root only (CI runs as root); for anyone else it names them and returns 1.
apt_install_missing() {
  [ "$#" -eq 0 ] && return 0
  if [ "$(id -u)" != "0" ]; then
    echo "missing system packages: $* (run as root or install them: apt-get install $*)" >&2
    return 1
  fi
  echo "installing system packages: $*"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
