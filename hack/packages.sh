#!/usr/bin/env bash
# The system packages rudder's build and tests need, listed once: .ci/run
# installs them before anything else, and make test checks them before any
# test starts.
#
# Usage: hack/packages.sh [ensure|list]
#   ensure  (the default) install the missing packages with apt-get when this
#           runs as root on a Debian-family machine; otherwise, when one is
#           missing, print the exact command to run and exit 1
#   list    print the package names, one a line
#
# Debian's names; on a machine without dpkg, a package counts as installed
# when the command that proves it is found (PROVES below).
set -euo pipefail

# make: the build entry point; git: go build stamps VCS data; openssl: the local
# cluster's certificates and keys; ca-certificates: TLS to the Go module proxy;
# procps: pgrep/ps for tests and scripts; postgresql: server binaries (initdb,
# pg_ctl, postgres) for tests that run a private PostgreSQL; shellcheck, which
# checks the backup and restore scripts as POSIX sh.
PACKAGES=(make git openssl ca-certificates procps postgresql shellcheck)

# PROVES: the command each package puts on a machine, for machines without
# dpkg. PostgreSQL's server commands are off PATH on Debian
# (/usr/lib/postgresql/<major>/bin), which the tests search too.
declare -A PROVES=(
  [make]=make [git]=git [openssl]=openssl [ca-certificates]=""
  [procps]=pgrep [postgresql]=initdb [shellcheck]=shellcheck
)

log() { echo "packages: $*" >&2; }

debian() { command -v dpkg-query >/dev/null && command -v apt-get >/dev/null; }

# installed PACKAGE: dpkg says so, or, without dpkg, its command is found.
installed() {
  local package=$1 proof
  if debian; then
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'
    return
  fi
  proof=${PROVES[$package]}
  [[ -z $proof ]] && return 0
  command -v "$proof" >/dev/null && return 0
  compgen -G "/usr/lib/postgresql/*/bin/$proof" >/dev/null
}

missing() {
  local package
  for package in "${PACKAGES[@]}"; do
    installed "$package" || echo "$package"
  done
}

ensure() {
  local -a absent
  mapfile -t absent < <(missing)
  if ((${#absent[@]} == 0)); then
    log "installed: ${PACKAGES[*]}"
    return
  fi
  if debian && ((EUID == 0)); then
    log "installing: ${absent[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${absent[@]}" </dev/null
    return
  fi
  log "missing: ${absent[*]}; nothing was run. Install them, then run make test again:"
  if debian; then
    echo "  sudo apt-get install -y --no-install-recommends ${absent[*]}" >&2
  else
    local package
    for package in "${absent[@]}"; do
      echo "  $package (Debian's name; the command ${PROVES[$package]} must be found)" >&2
    done
    echo "  with this system's package manager" >&2
  fi
  exit 1
}

case ${1:-ensure} in
  ensure) ensure ;;
  list) printf '%s\n' "${PACKAGES[@]}" ;;
  *) echo "usage: $0 [ensure|list]" >&2; exit 2 ;;
esac
