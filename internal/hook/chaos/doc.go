// Package chaos is the "podchaos" hook of the PodChaos kind: failures on
// purpose, within a budget. On a schedule kept in the resource's status (so
// that a restarted or new manager resumes it without an extra round) it
// kills or evicts Ready pods chosen at random among those the spec selects in
// the resource's own namespace, never leaving more than maxUnavailable of
// them not Ready, and measures how long they take to be Ready again. A round
// is written ahead into status before it acts, and acts on pods by UID, so
// that one interrupted midway is finished, not run twice. Deciding (plan.go,
// pure) is kept apart from doing (hook.go); it writes pods only through the
// client of the account rudder acts as for the resource (hook.Acting).
// It must never import Helm or package helm, nor the reconcile, manager, cli,
// admission or preview packages.
package chaos
