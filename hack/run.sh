#!/usr/bin/env bash
# Runs rudder (bin/manager) in the foreground against a cluster.
#
# The cluster is the one KUBECONFIG (or ~/.kube/config) points at; when neither
# exists, the local cluster of hack/cluster-up.sh is started (or reused) and
# stays running after rudder exits ('make cluster-down' stops it).
# The CRDs in config/crd/bases/ are applied first. Of the pinned tools it
# builds only those it runs (hack/tools.sh): kubectl, and the local cluster's
# when it starts one.
#
# On the local cluster, rudder serves its admission webhook in url mode
# (--webhook=url: the API server calls https://localhost:9443, the manager
# writes its own ValidatingWebhookConfiguration "rudder"); RUDDER_ARGS or the
# arguments override it (--webhook=off). Elsewhere the webhook stays off: a
# remote API server cannot reach this host.
#
# Arguments are passed to the manager; RUDDER_ARGS adds more flags, e.g.
#   RUDDER_ARGS="--zap-log-level=debug" make run
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/bin
CRDS=$ROOT/config/crd/bases

LOCAL_CLUSTER=false

log() { echo "run: $*"; }

# choose_cluster: keep the user's cluster when they have one configured.
choose_cluster() {
  if [[ -n ${KUBECONFIG:-} || -f $HOME/.kube/config ]]; then
    log "using the cluster of ${KUBECONFIG:-$HOME/.kube/config}"
    "$ROOT/hack/tools.sh" kubectl
    if [[ -n ${KUBECONFIG:-} && $(realpath -m "$KUBECONFIG") == $(realpath -m "$BIN/cluster/kubeconfig") ]]; then
      LOCAL_CLUSTER=true
    fi
    return
  fi
  log "KUBECONFIG is not set and $HOME/.kube/config does not exist: using the local cluster"
  "$ROOT/hack/tools.sh" cluster
  "$ROOT/hack/cluster-up.sh"
  export KUBECONFIG=$BIN/cluster/kubeconfig
  LOCAL_CLUSTER=true
  log "KUBECONFIG=$KUBECONFIG (the cluster keeps running after rudder exits; 'make cluster-down' stops it)"
}

# install_crds: apply config/crd/bases/ when it holds any manifest.
install_crds() {
  if ! compgen -G "$CRDS/*.yaml" >/dev/null && ! compgen -G "$CRDS/*.yml" >/dev/null; then
    log "no CRD manifests in $CRDS yet; skipping CRD installation"
    return
  fi
  log "applying the CRDs in $CRDS"
  "$BIN/kubectl" apply -f "$CRDS/"
  # The manager's watches start only for kinds the API server serves: wait
  # until every CRD is Established rather than leave them to retry.
  "$BIN/kubectl" wait --for=condition=Established --timeout=60s -f "$CRDS/"
}

main() {
  [[ -x $BIN/manager ]] || { echo "run: $BIN/manager is missing; run 'make build'" >&2; exit 1; }
  choose_cluster
  install_crds

  # RUDDER_ARGS is split on whitespace on purpose: it holds several flags.
  local extra_args=()
  read -r -a extra_args <<<"${RUDDER_ARGS:-}"
  local args=("${extra_args[@]}" "$@")
  if [[ $LOCAL_CLUSTER == true ]]; then
    args=(--webhook=url "${args[@]}") # a later --webhook wins
  fi
  log "starting $BIN/manager${args[*]:+$(printf ' %q' "${args[@]}")}"
  exec "$BIN/manager" "${args[@]}"
}

main "$@"
