#!/usr/bin/env bash
# Deploys rudder to the cluster of KUBECONFIG, or removes it.
#
# Usage: hack/deploy.sh deploy     apply config/default (or KUSTOMIZE_DIR, such
#                                  as config/shards) with the image IMG (default
#                                  rudder:latest) and wait for its Deployments
#                                  to roll out
#        hack/deploy.sh undeploy   delete what deploy applied except the CRDs
#                                  (and so the custom resources); with
#                                  UNDEPLOY_CRDS=true, the CRDs too
#
# kubectl's built-in kustomize builds KUSTOMIZE_DIR through an overlay under
# bin/ that sets the image, so that config/ is never edited by a deploy.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KUBECTL=${KUBECTL:-$ROOT/bin/kubectl}
IMG=${IMG:-rudder:latest}
KUSTOMIZE_DIR=${KUSTOMIZE_DIR:-config/default}
OVERLAY=$ROOT/bin/deploy

fail() {
  echo "deploy: $*" >&2
  exit 1
}

# write_overlay: a kustomization over KUSTOMIZE_DIR whose image is IMG,
# split into name and tag (or digest) the way kustomize's images field wants.
write_overlay() {
  local name=$IMG tag="" digest=""
  if [[ $IMG == *@* ]]; then
    name=${IMG%@*} digest=${IMG#*@}
  elif [[ ${IMG##*/} == *:* ]]; then
    name=${IMG%:*} tag=${IMG##*:}
  fi
  [[ -n $name ]] || fail "IMG=$IMG: no image name"
  mkdir -p "$OVERLAY"
  {
    echo "# Written by hack/deploy.sh for IMG=$IMG; not to be edited."
    echo "apiVersion: kustomize.config.k8s.io/v1beta1"
    echo "kind: Kustomization"
    echo "resources:"
    echo "  - ../../$KUSTOMIZE_DIR"
    echo "images:"
    echo "  - name: rudder"
    echo "    newName: $name"
    [[ -z $tag ]] || echo "    newTag: \"$tag\""
    [[ -z $digest ]] || echo "    digest: $digest"
  } >"$OVERLAY/kustomization.yaml"
}

deploy() {
  write_overlay
  "$KUBECTL" apply -k "$OVERLAY"
  local d
  for d in $("$KUBECTL" -n operators get deployments -l app.kubernetes.io/name=rudder -o name); do
    "$KUBECTL" -n operators rollout status "$d" --timeout="${ROLLOUT_TIMEOUT:-3m}"
  done
}

# undeploy: everything of KUSTOMIZE_DIR carries app.kubernetes.io/part-of=rudder
# except the CRDs, which belong to the users' resources as much as to rudder.
undeploy() {
  write_overlay
  if [[ ${UNDEPLOY_CRDS:-} == true ]]; then
    "$KUBECTL" delete -k "$OVERLAY" --ignore-not-found
  else
    "$KUBECTL" delete -k "$OVERLAY" --ignore-not-found -l app.kubernetes.io/part-of=rudder
    echo "deploy: the CRDs stay (UNDEPLOY_CRDS=true removes them, and every custom resource with them)"
  fi
}

case ${1:-} in
deploy) deploy ;;
undeploy) undeploy ;;
*) fail "usage: hack/deploy.sh deploy|undeploy" ;;
esac
