// Package leader is the "leader" hook of the LeaderElection kind: it chooses
// one Ready pod among those a resource selects in its own namespace, records
// it in a coordination.k8s.io Lease named after the resource (holder = the
// pod's name, renewed while it leads) and labels it rudder.dev/leader=true, so
// that a Service selecting the label reaches it alone. Its state is the Lease
// and the label, never memory: a restarted manager keeps the leader.
//
// It never lets two pods carry the label: the label is taken off every other
// pod, each removal confirmed by the API server, before it is put on the
// leader. It owns the Elected condition and status.leader, leaderSince,
// leaderChanges and leaderNode; it acts on nothing but the pods the resource
// selects and its own Lease.
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package leader
