#!/usr/bin/env bash
# Stops the local control plane started by hack/cluster-up.sh and removes its
# state (bin/cluster). Only the processes recorded in bin/cluster/pids are
# touched, and only while their command line is still the binary cluster-up
# started (a pid may have been recycled since). Harmless when nothing runs.
set -euo pipefail

# Seconds to wait after SIGTERM before SIGKILL.
GRACE_PERIOD=20

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/bin
CLUSTER=$BIN/cluster
PIDS=$CLUSTER/pids

# Clients first, etcd last, in two rounds: fewer errors in the logs, and the API
# server finishes its graceful shutdown against a live etcd.
CLIENTS=(kwok kube-scheduler kube-controller-manager kube-apiserver)
STORAGE=(etcd)

log() { echo "cluster-down: $*"; }

# pid_of COMPONENT: print the recorded pid when that process is alive and still
# runs our binary.
pid_of() {
  local name=$1 pid argv0
  [[ -f $PIDS/$name.pid ]] || return 1
  pid=$(<"$PIDS/$name.pid")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  argv0=$(tr '\0' '\n' <"/proc/$pid/cmdline" | head -n 1)
  # Resolved: bin/ may be a symlink (a git worktree sharing the tools).
  [[ $(readlink -f "$argv0") == "$(readlink -f "$BIN/$name")" ]] || return 1
  echo "$pid"
}

# still_running NAME...: print the names of those components still alive.
still_running() {
  local name
  for name in "$@"; do
    if pid_of "$name" >/dev/null; then
      echo "$name"
    fi
  done
}

# signal_all SIGNAL NAME...: send SIGNAL to every live one of the components.
signal_all() {
  local signal=$1 name pid
  shift
  for name in "$@"; do
    if pid=$(pid_of "$name"); then
      log "sending SIG$signal to $name (pid $pid)"
      kill "-$signal" "$pid" 2>/dev/null || true
    fi
  done
}

# wait_for_exit SECONDS NAME...: true once none of the components runs any more.
wait_for_exit() {
  local deadline=$((SECONDS + $1))
  shift
  while [[ -n $(still_running "$@") ]]; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}

# stop NAME...: SIGTERM, then SIGKILL for what is left after the grace period.
stop() {
  signal_all TERM "$@"
  wait_for_exit "$GRACE_PERIOD" "$@" && return
  log "still running after ${GRACE_PERIOD}s: $(still_running "$@" | tr '\n' ' ')"
  signal_all KILL "$@"
  wait_for_exit 10 "$@" && return
  log "could not stop: $(still_running "$@" | tr '\n' ' '); keeping $CLUSTER" >&2
  exit 1
}

main() {
  if [[ ! -d $CLUSTER ]]; then
    log "no cluster state in $CLUSTER; nothing to do"
    return
  fi
  stop "${CLIENTS[@]}"
  stop "${STORAGE[@]}"
  rm -rf "$CLUSTER"
  log "stopped; removed $CLUSTER"
}

main "$@"
