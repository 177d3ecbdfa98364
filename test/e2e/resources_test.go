//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Databases and Networks in a test's own namespace (WebApps: lcApp).

// nsDatabase is one Database in a test's own namespace.
type nsDatabase struct {
	t        *testing.T
	ns, name string
}

func (d *nsDatabase) create(spec map[string]any) {
	d.t.Helper()
	b, err := json.Marshal(map[string]any{
		"apiVersion": "database.my.domain/v1",
		"kind":       "Database",
		"metadata":   map[string]any{"name": d.name, "namespace": d.ns},
		"spec":       spec,
	})
	if err != nil {
		d.t.Fatal(err)
	}
	apply(d.t, string(b))
}

// waitReady waits until the Database's Ready condition, at its generation,
// has status and reason and a message containing each of notes.
func (d *nsDatabase) waitReady(status metav1.ConditionStatus, reason string, notes ...string) {
	d.t.Helper()
	eventuallyWithin(d.t, 3*time.Minute, fmt.Sprintf("Database %s/%s Ready %s (%s)", d.ns, d.name, status, reason), func() error {
		var db database
		found, err := getJSON(&db, "database", d.name, "-n", d.ns)
		if err != nil {
			return fmt.Errorf("Database %s/%s: %w", d.ns, d.name, err)
		}
		if !found {
			return fmt.Errorf("expected Database %s/%s, saw NotFound", d.ns, d.name)
		}
		c := condition(db.Status.Conditions, "Ready")
		switch {
		case c == nil:
			return fmt.Errorf("no Ready condition; conditions %s", toJSON(db.Status.Conditions))
		case c.Status != status || c.Reason != reason || c.ObservedGeneration != db.Metadata.Generation:
			return fmt.Errorf("Ready %s (%s: %s) at generation %d of %d", c.Status, c.Reason, c.Message, c.ObservedGeneration, db.Metadata.Generation)
		}
		for _, n := range notes {
			if !strings.Contains(c.Message, n) {
				return fmt.Errorf("Ready's message %q does not mention %q", c.Message, n)
			}
		}
		return nil
	})
}

func (d *nsDatabase) mustHistory() []helmRevision {
	d.t.Helper()
	out := helm(d.t, "history", "database-"+d.name, "-n", d.ns, "--max", "100", "-o", "json")
	var revs []helmRevision
	if err := json.Unmarshal([]byte(out), &revs); err != nil {
		d.t.Fatalf("decoding helm history of Database %s/%s: %v", d.ns, d.name, err)
	}
	return revs
}

func (d *nsDatabase) checkSteady(n int) {
	d.t.Helper()
	checkRevisions(d.t, "Database "+d.ns+"/"+d.name, d.mustHistory(), n)
}

// backUp asks for a backup (rudder.dev/backup-now=request) and waits until
// the Database reports it.
func (d *nsDatabase) backUp(request string) {
	d.t.Helper()
	kubectl(d.t, "annotate", "database", d.name, "-n", d.ns, "rudder.dev/backup-now="+request)
	eventuallyWithin(d.t, 3*time.Minute, fmt.Sprintf("backup %s of Database %s/%s recorded", request, d.ns, d.name), func() error {
		if !backupRecorded(d.t, d.ns, d.name) {
			return fmt.Errorf("no backup recorded on Database %s/%s yet", d.ns, d.name)
		}
		return nil
	})
}

// createNetwork applies Network ns/name with cidr and gateway.
func createNetwork(t *testing.T, ns, name, cidr, gateway string) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": "samplecrd.k8s.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"cidr": cidr, "gateway": gateway}})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, string(b))
}

// waitNetworkReady waits until Network ns/name has Ready True.
func waitNetworkReady(t *testing.T, ns, name string) {
	t.Helper()
	eventually(t, "Network "+ns+"/"+name+" Ready", func() error {
		var obj struct {
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if _, err := getJSON(&obj, "network", name, "-n", ns); err != nil {
			return err
		}
		if c := condition(obj.Status.Conditions, "Ready"); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Ready is %+v", c)
		}
		return nil
	})
}

// waitConditionOf waits until the custom resource kind ns/name (any of
// rudder's kinds) has condition typ with status and reason, its message
// holding each of notes.
func waitConditionOf(t *testing.T, kind, ns, name, typ string, status metav1.ConditionStatus, reason string, notes ...string) {
	t.Helper()
	eventually(t, fmt.Sprintf("condition %s %s (%s) on %s %s/%s", typ, status, reason, kind, ns, name), func() error {
		var obj struct {
			Status struct {
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"status"`
		}
		if _, err := getJSON(&obj, kind, name, "-n", ns); err != nil {
			return err
		}
		c := condition(obj.Status.Conditions, typ)
		if c == nil || c.Status != status || c.Reason != reason {
			return fmt.Errorf("%s is %s", typ, toJSON(c))
		}
		for _, n := range notes {
			if !strings.Contains(c.Message, n) {
				return fmt.Errorf("%s message %q lacks %q", typ, c.Message, n)
			}
		}
		return nil
	})
}
