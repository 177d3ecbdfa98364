#!/usr/bin/env bash
# Starts a local Kubernetes control plane with fake (kwok) nodes, all from the
# binaries in bin/ (see hack/tools.sh):
#
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok run
#   as background processes; pods are scheduled on kwok nodes and kwok's "fast"
#   stages make them Running and Ready at once, so Deployments report ready
#   replicas and Jobs complete. No container ever runs. The controller-manager's
#   hostPath provisioner backs the default StorageClass "standard", so claims
#   bind (to directories under /tmp/hostpath_pv that no container ever writes).
#
# Everything lives under bin/cluster/ (pki/, etcd/, logs/*.log, pids/*.pid,
# kubeconfig); hack/cluster-down.sh stops the processes and removes it.
#
# Usage: hack/cluster-up.sh           start (or report "cluster already running")
#        hack/cluster-up.sh --check   exit 0 when a started cluster is running, 1 otherwise
#        hack/cluster-up.sh --restart etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kwok
#                                     SIGKILL that component of the running cluster and start it
#                                     again with the same flags and data (the fault tests' outage)
#
# Ports avoid the usual ones of a real cluster on the same machine
# (2379/2380/6443/10250/10257/10259).
set -euo pipefail

ETCD_CLIENT_PORT=23790
ETCD_PEER_PORT=23800
APISERVER_PORT=16443
CONTROLLER_MANAGER_PORT=20257
SCHEDULER_PORT=20259
KWOK_PORT=20250

# A /16, not a /24: a /24 runs out of ClusterIPs after 254 Services.
SERVICE_CIDR=10.96.0.0/16
SERVICE_FIRST_IP=10.96.0.1
# Each fake node gets a /20 out of this /16 for its pods' IPs.
POD_CIDR_PREFIX=10.244

# Fake nodes: together they must hold at least 1000 pods (the default of 110 per
# node caps how many pods ever run). Overridable for bigger experiments.
NODE_COUNT=${RUDDER_KWOK_NODES:-2}
PODS_PER_NODE=${RUDDER_KWOK_PODS_PER_NODE:-600}

# Generous timeouts in seconds: this is a slow, shared 2-core machine.
APISERVER_TIMEOUT=240
NODES_TIMEOUT=180
PROBE_TIMEOUT=300

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/bin
CLUSTER=$BIN/cluster
PKI=$CLUSTER/pki
LOGS=$CLUSTER/logs
PIDS=$CLUSTER/pids
KUBECONFIG_FILE=$CLUSTER/kubeconfig
# Written last, after the probe Deployment became ready: a cluster without it is
# a failed or interrupted start and is not reported as running.
READY_MARKER=$CLUSTER/ready
# kube-apiserver's --feature-gates, e.g. ShardedListAndWatch=true (make cluster-up
# FEATURE_GATES=...): rudder's shards then have the API server filter their lists
# and watches. Recorded at the start, so that a --restart keeps them.
FEATURE_GATES_FILE=$CLUSTER/feature-gates

# Start order; hack/cluster-down.sh stops them in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
STARTED=()
# A function fail() runs first to add context, e.g. the state of the probe's pods.
ON_FAILURE=

log() { echo "cluster-up: $*"; }

kc() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" --request-timeout=20s "$@"; }

# pid_of COMPONENT: print the recorded pid when that process is alive and still
# runs our binary (a recycled pid must not count).
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

# running: every component is alive, the start had completed and the API answers.
running() {
  local name
  [[ -f $READY_MARKER && -f $KUBECONFIG_FILE ]] || return 1
  for name in "${COMPONENTS[@]}"; do
    pid_of "$name" >/dev/null || return 1
  done
  kc get --raw=/readyz >/dev/null 2>&1
}

# show_logs COMPONENT...: the tail of each component's log, to explain a failure.
show_logs() {
  local name
  for name in "$@"; do
    [[ -f $LOGS/$name.log ]] || continue
    echo "----- last 40 lines of $LOGS/$name.log -----"
    tail -n 40 "$LOGS/$name.log"
  done
}

# fail MESSAGE COMPONENT...: report, show the relevant logs, leave the state for inspection.
fail() {
  local message=$1
  shift
  echo "cluster-up: FAILED: $message" >&2
  if [[ -n $ON_FAILURE ]]; then
    "$ON_FAILURE" >&2
  fi
  show_logs "$@" >&2
  echo "cluster-up: state and logs are kept in $CLUSTER; 'make cluster-down' stops and removes them" >&2
  exit 1
}

# check_started_alive: fail as soon as a component we started has exited.
check_started_alive() {
  local name
  for name in "${STARTED[@]}"; do
    pid_of "$name" >/dev/null || fail "$name exited" "$name"
  done
}

# wait_until WHAT TIMEOUT "COMPONENTS" COMMAND...: poll COMMAND until it
# succeeds; fail with the logs of COMPONENTS on timeout or when any started
# component dies meanwhile.
wait_until() {
  local what=$1 timeout=$2 components=$3
  shift 3
  local deadline=$((SECONDS + timeout)) started=$SECONDS
  log "waiting for $what (up to ${timeout}s)"
  until "$@" >/dev/null 2>&1; do
    check_started_alive
    if ((SECONDS >= deadline)); then
      # shellcheck disable=SC2086 # the component list is meant to split
      fail "timed out after ${timeout}s waiting for $what" $components
    fi
    sleep 2
  done
  log "done in $((SECONDS - started))s: $what"
}

require_binaries() {
  local name
  for name in "${COMPONENTS[@]}" kubectl; do
    [[ -x $BIN/$name ]] || { echo "cluster-up: $BIN/$name is missing; run 'hack/tools.sh cluster'" >&2; exit 1; }
  done
  # The stamp names the kwok version, whose module holds the Stage manifests.
  [[ -f $BIN/.stamps/kwok ]] || { echo "cluster-up: $BIN/.stamps/kwok is missing; run 'hack/tools.sh cluster'" >&2; exit 1; }
  command -v openssl >/dev/null || { echo "cluster-up: openssl is required" >&2; exit 1; }
  command -v go >/dev/null || { echo "cluster-up: go is required (it locates kwok's stages)" >&2; exit 1; }
}

# listening PORT: whether something accepts connections on 127.0.0.1:PORT.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# require_free_ports: a clear message beats a component dying on "address in use".
require_free_ports() {
  local port
  for port in $ETCD_CLIENT_PORT $ETCD_PEER_PORT $APISERVER_PORT $CONTROLLER_MANAGER_PORT $SCHEDULER_PORT $KWOK_PORT; do
    if listening "$port"; then
      echo "cluster-up: port $port on 127.0.0.1 is already in use" >&2
      exit 1
    fi
  done
}

# generate_pki: a CA, the API server's serving certificate and the
# service-account signing key pair, all with openssl.
generate_pki() {
  mkdir -p "$PKI"
  # A minimal config of our own, so that the Debian/OpenSSL version's default
  # openssl.cnf cannot add or duplicate extensions.
  cat >"$PKI/openssl.cnf" <<EOF
[req]
distinguished_name = dn
prompt = no
[dn]
CN = rudder-local-ca
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
[serving]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1, IP:$SERVICE_FIRST_IP, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local
EOF
  openssl genrsa -out "$PKI/ca.key" 2048 2>/dev/null
  openssl req -x509 -new -key "$PKI/ca.key" -days 3650 -config "$PKI/openssl.cnf" \
    -extensions ca -out "$PKI/ca.crt"
  openssl genrsa -out "$PKI/apiserver.key" 2048 2>/dev/null
  openssl req -new -key "$PKI/apiserver.key" -subj /CN=kube-apiserver -out "$PKI/apiserver.csr"
  openssl x509 -req -in "$PKI/apiserver.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
    -CAcreateserial -days 3650 -extfile "$PKI/openssl.cnf" -extensions serving \
    -out "$PKI/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
  openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
}

# write_credentials: one admin token (group system:masters) used by kubectl and
# by every component; the kubeconfig embeds the CA so it can be copied anywhere.
write_credentials() {
  local token
  token=$(openssl rand -hex 32)
  printf '%s,admin,admin,"system:masters"\n' "$token" >"$PKI/tokens.csv"
  chmod 600 "$PKI/tokens.csv"
  cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: rudder
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority-data: $(base64 -w0 <"$PKI/ca.crt")
users:
- name: admin
  user:
    token: $token
contexts:
- name: rudder
  context:
    cluster: rudder
    user: admin
current-context: rudder
EOF
  chmod 600 "$KUBECONFIG_FILE"
}

# write_kwok_stages: kwok v0.8.0 reads Stage objects from its --config file (or,
# with --enable-crds=Stage, from the API). We join stages of the kwok module, read
# from the Go module cache at run time, into one multi-document file: node and
# pod "fast" (Ready at once) and the node status heartbeat that goes with kwok's
# node Leases; then rudder's own stages in hack/kwok (Helm test pods complete).
write_kwok_stages() {
  local version dir tmp file
  version=$(<"$BIN/.stamps/kwok")
  # From an empty directory, outside any module, so that rudder's go.mod is not
  # consulted (GOFLAGS such as -mod=... would be rejected there).
  tmp=$(mktemp -d)
  dir=$(cd "$tmp" && GOFLAGS='' go mod download -json "sigs.k8s.io/kwok@$version" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rmdir "$tmp"
  [[ -d $dir/kustomize/stage/node/fast ]] || fail "kwok $version module has no kustomize/stage/node/fast (looked in '$dir')"
  : >"$CLUSTER/kwok-stages.yaml"
  for file in "$dir"/kustomize/stage/node/{fast,heartbeat-with-lease}/*.yaml "$dir"/kustomize/stage/pod/fast/*.yaml \
    "$ROOT"/hack/kwok/*.yaml; do
    [[ $(basename "$file") == kustomization.yaml ]] && continue
    { echo "---"; cat "$file"; } >>"$CLUSTER/kwok-stages.yaml"
  done
}

# start COMPONENT ARGS...: run bin/COMPONENT in its own session (so that a ^C in
# the calling terminal or make does not reach it), log to logs/COMPONENT.log and
# record its pid. setsid does not fork here (the child of & is no process-group
# leader in a script), so $! is the component's own pid.
start() {
  local name=$1
  shift
  # 9>&-: the component must not inherit (and so keep holding) the start lock.
  setsid "$BIN/$name" "$@" </dev/null >"$LOGS/$name.log" 2>&1 9>&- &
  echo $! >"$PIDS/$name.pid"
  STARTED+=("$name")
  log "started $name (pid $!, log $LOGS/$name.log)"
}

start_etcd() {
  # --unsafe-no-fsync: the data is thrown away with the cluster; fsync on a slow
  # shared disk only makes every write slower.
  start etcd \
    --name=rudder \
    --data-dir="$CLUSTER/etcd" \
    --listen-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --advertise-client-urls="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster="rudder=http://127.0.0.1:$ETCD_PEER_PORT" \
    --unsafe-no-fsync=true \
    --log-level=warn
}

start_apiserver() {
  local gates
  gates=$(cat "$FEATURE_GATES_FILE" 2>/dev/null || true)
  # TaintNodesByCondition is disabled: it puts node.kubernetes.io/not-ready on
  # every new node until the node-lifecycle controller sees it Ready; kwok nodes
  # are Ready at once, so they are schedulable at once. Pods tolerate a NotReady
  # or unreachable node for 30 s (not 300), so that pods recover from a node
  # outage the way a real cluster's do after a long one, by eviction and
  # rescheduling, and a test need not wait five minutes for that (a pod still
  # there when its node is back is made ready again by hack/kwok's stage).
  # --endpoint-reconciler-type=none: since v1.37 the API server refuses to start
  # when it would publish a loopback address as the endpoint of the "kubernetes"
  # Service; no pod really runs here, so that Service needs no endpoints.
  start kube-apiserver \
    --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --endpoint-reconciler-type=none \
    --secure-port="$APISERVER_PORT" \
    --tls-cert-file="$PKI/apiserver.crt" \
    --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --token-auth-file="$PKI/tokens.csv" \
    --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI/sa.pub" \
    --service-account-signing-key-file="$PKI/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --disable-admission-plugins=TaintNodesByCondition \
    --default-not-ready-toleration-seconds=30 \
    --default-unreachable-toleration-seconds=30 \
    --allow-privileged=true \
    ${gates:+--feature-gates="$gates"}
}

start_controller_manager() {
  # nodeipam is off: nodes get their podCIDR from us. nodelifecycle is on, as in
  # a real cluster: kwok renews each node's Lease (its heartbeat) every 5 s; a node
  # whose Lease is not renewed for 40 s (kwok stopped managing it, as a kubelet
  # that died) turns Ready=Unknown, its pods are marked not ready and, after
  # their toleration, evicted. The private key and
  # root CA let the token controller fill service-account token Secrets.
  # Higher client QPS than the default 20: thousands of pods are created in tests.
  # No --authentication/authorization-kubeconfig (here and for the scheduler):
  # delegated auth would want the API server's front-proxy (requestheader) CA and
  # log errors without it; their secure ports only need to serve /healthz.
  start kube-controller-manager \
    --kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 \
    --secure-port="$CONTROLLER_MANAGER_PORT" \
    --controllers='*,-nodeipam' \
    --node-monitor-grace-period=40s \
    --service-account-private-key-file="$PKI/sa.key" \
    --root-ca-file="$PKI/ca.crt" \
    --cluster-signing-cert-file="$PKI/ca.crt" \
    --cluster-signing-key-file="$PKI/ca.key" \
    --leader-elect=false \
    --enable-hostpath-provisioner=true \
    --kube-api-qps=100 \
    --kube-api-burst=200
}

start_scheduler() {
  start kube-scheduler \
    --kubeconfig="$KUBECONFIG_FILE" \
    --bind-address=127.0.0.1 \
    --secure-port="$SCHEDULER_PORT" \
    --leader-elect=false \
    --kube-api-qps=100 \
    --kube-api-burst=200
}

start_kwok() {
  # Only nodes annotated kwok.x-k8s.io/node=fake (and their pods) are kwok's, so a
  # real node joined to this cluster would be left alone. --server-address serves
  # /healthz and metrics on a loopback port. --node-lease-duration-seconds makes
  # kwok hold and renew each node's Lease, as a kubelet does, so that the
  # node-lifecycle controller sees the nodes alive.
  start kwok \
    --kubeconfig="$KUBECONFIG_FILE" \
    --config="$CLUSTER/kwok-stages.yaml" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr="$POD_CIDR_PREFIX.0.0/16" \
    --node-ip=127.0.0.1 \
    --server-address="127.0.0.1:$KWOK_PORT" \
    --node-lease-duration-seconds=20
}

# create_nodes: fake nodes with room for PODS_PER_NODE pods each. Node status may
# be set on create; kwok's node-initialize stage keeps the capacity and adds the
# Ready condition.
create_nodes() {
  local i
  for ((i = 0; i < NODE_COUNT; i++)); do
    cat <<EOF
---
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/hostname: kwok-node-$i
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
spec:
  podCIDR: $POD_CIDR_PREFIX.$((i * 16)).0/20
  podCIDRs: [$POD_CIDR_PREFIX.$((i * 16)).0/20]
status:
  capacity: {cpu: "64", memory: 256Gi, pods: "$PODS_PER_NODE", ephemeral-storage: 1Ti}
  allocatable: {cpu: "64", memory: 256Gi, pods: "$PODS_PER_NODE", ephemeral-storage: 1Ti}
EOF
  done | kc apply -f - >/dev/null
}

# create_storage_class: the default StorageClass, provisioned by the
# controller-manager's hostPath provisioner (--enable-hostpath-provisioner), so
# that a PersistentVolumeClaim with no class, or class "standard", binds at once.
create_storage_class() {
  kc apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF
}

# nodes_ready: every fake node reports Ready=True.
nodes_ready() {
  local statuses
  statuses=$(kc get nodes -l type=kwok -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')
  [[ $(grep -c '^True$' <<<"$statuses") -eq $NODE_COUNT ]]
}

apiserver_ready() { kc get --raw=/readyz; }
probe_service_account() { kc -n rudder-probe get serviceaccount default; }
probe_ready() { [[ $(kc -n rudder-probe get deployment probe -o jsonpath='{.status.readyReplicas}') == 2 ]]; }
probe_claim_bound() { [[ $(kc -n rudder-probe get pvc probe -o jsonpath='{.status.phase}') == Bound ]]; }
# probe_deleted: NotFound, not just any error (an unanswered request is no proof).
probe_deleted() {
  local found
  found=$(kc -n rudder-probe get deployment probe --ignore-not-found -o name) && [[ -z $found ]]
}

# describe_probe: what the probe's objects look like, to explain a timeout.
describe_probe() {
  kc -n rudder-probe get deployment,replicaset,pods,pvc -o wide || true
  kc -n rudder-probe get events --sort-by=.lastTimestamp || true
  kc get nodes -o wide || true
}

# probe: the cluster "really works" when a Deployment gets its pods created
# (controller-manager), scheduled (scheduler) and Ready (kwok).
probe() {
  kc create namespace rudder-probe >/dev/null
  wait_until "the service-account controller" "$PROBE_TIMEOUT" "kube-controller-manager" probe_service_account
  kc -n rudder-probe create deployment probe --image=registry.k8s.io/pause:3.10 --replicas=2 >/dev/null
  kc -n rudder-probe apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: probe
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Mi
EOF
  ON_FAILURE=describe_probe
  wait_until "the probe Deployment to have 2 ready replicas" "$PROBE_TIMEOUT" \
    "kube-controller-manager kube-scheduler kwok" probe_ready
  wait_until "the probe claim to bind (default StorageClass)" "$PROBE_TIMEOUT" "kube-controller-manager" probe_claim_bound
  # Foreground deletion: the Deployment is gone once the garbage collector and
  # kwok have deleted its pods. The namespace then goes in the background (the
  # namespace controller takes ~10s, which nobody needs to wait for).
  kc -n rudder-probe delete deployment probe --cascade=foreground --wait=false >/dev/null
  wait_until "the probe Deployment and its pods to be deleted" "$PROBE_TIMEOUT" \
    "kube-controller-manager kwok" probe_deleted
  ON_FAILURE=
  kc delete namespace rudder-probe --wait=false >/dev/null
}

# restart COMPONENT: kill etcd, kube-apiserver or kwok with SIGKILL, as a crash
# or an OOM kill would, and start it again on the same data; wait until the API
# answers. The previous log is kept as COMPONENT.log.<time>.
#
# After etcd, kwok, the controller-manager and the scheduler are restarted as
# well, as a controller-manager whose leader lease expired in the outage
# would be. kwok v0.8.0 can miss a pod that is bound while etcd is down, and
# leave it Pending for good (seen in TestFaults_ControlPlaneRestartedMidWave:
# a pod on kwok-node-1 Pending for 5 minutes, which kwok's log never named).
# The controller-manager can miss a namespace's deletion the same way (the
# same test: faults-etcd Terminating for 4 minutes while none of its custom
# resources was ever marked deleted). A kubelet or a namespace controller
# that missed an event would be no part of what the test asks of rudder,
# which is not restarted.
restart() {
  local name=$1 pid
  case $name in
    etcd | kube-apiserver | kube-controller-manager | kube-scheduler | kwok) ;;
    *) fail "--restart takes etcd, kube-apiserver, kube-controller-manager, kube-scheduler or kwok, not '$name'" ;;
  esac
  exec 9>"$BIN/.cluster-up.lock"
  flock 9
  running || fail "no running cluster to restart $name in (hack/cluster-up.sh starts one)"
  pid=$(pid_of "$name") || fail "$name is not running" "$name"
  kill -KILL "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  log "killed $name (pid $pid)"
  mv "$LOGS/$name.log" "$LOGS/$name.log.$(date +%s)"
  case $name in
    etcd) start_etcd ;;
    kube-apiserver) start_apiserver ;;
    kube-controller-manager) start_controller_manager ;;
    kube-scheduler) start_scheduler ;;
    kwok) start_kwok ;;
  esac
  wait_until "kube-apiserver /readyz" "$APISERVER_TIMEOUT" "kube-apiserver etcd" apiserver_ready
  case $name in
    kube-controller-manager) wait_until "kube-controller-manager's port" "$APISERVER_TIMEOUT" "$name" listening "$CONTROLLER_MANAGER_PORT" ;;
    kube-scheduler) wait_until "kube-scheduler's port" "$APISERVER_TIMEOUT" "$name" listening "$SCHEDULER_PORT" ;;
  esac
  if [[ $name == etcd ]]; then
    exec 9>&-
    restart kube-controller-manager
    restart kube-scheduler
    restart kwok
  fi
}

print_export() {
  echo "export KUBECONFIG=$KUBECONFIG_FILE"
}

main() {
  if [[ ${1:-} == --check ]]; then
    running
    return
  fi
  if [[ ${1:-} == --restart ]]; then
    restart "${2:-}"
    return
  fi

  # One start at a time (e.g. `make run` and `make test-e2e` in two terminals):
  # a second start would take the first one's half-started state for a broken
  # cluster and tear it down. The lock lives outside bin/cluster, which
  # cluster-down removes.
  mkdir -p "$BIN"
  exec 9>"$BIN/.cluster-up.lock"
  flock 9

  if running; then
    log "cluster already running"
    print_export
    return
  fi

  require_binaries
  if [[ -d $CLUSTER ]]; then
    log "found a stopped or half-started cluster in $CLUSTER; cleaning it up first"
    "$ROOT/hack/cluster-down.sh"
  fi
  require_free_ports

  local begin=$SECONDS
  mkdir -p "$CLUSTER" "$LOGS" "$PIDS"
  generate_pki
  write_credentials
  write_kwok_stages
  echo "${RUDDER_FEATURE_GATES:-}" >"$FEATURE_GATES_FILE"

  start_etcd
  start_apiserver
  wait_until "kube-apiserver /readyz" "$APISERVER_TIMEOUT" "kube-apiserver etcd" apiserver_ready

  start_controller_manager
  start_scheduler
  start_kwok
  create_nodes
  create_storage_class
  wait_until "$NODE_COUNT Ready kwok nodes" "$NODES_TIMEOUT" "kwok" nodes_ready
  probe

  touch "$READY_MARKER"
  log "cluster ready in $((SECONDS - begin))s: $NODE_COUNT kwok nodes x $PODS_PER_NODE pods, API https://127.0.0.1:$APISERVER_PORT${RUDDER_FEATURE_GATES:+, feature gates $RUDDER_FEATURE_GATES}"
  print_export
}

main "$@"
