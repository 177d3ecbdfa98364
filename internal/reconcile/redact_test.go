package reconcile_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/reconcile"
	"github.com/rudder-operator/rudder/internal/testenv"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
)

// A value taken from a Secret that the chart's schema refuses is quoted by
// the schema's error: neither the resource's status nor its events show it.
func TestReconciler_SecretValuesStayOutOfStatusAndEvents(t *testing.T) {
	ns := namespace(t)
	const replicas, cpu = "hunter2-replicas", "hunter2 cpu request"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leak"},
		StringData: map[string]string{"replicas": replicas, "cpu": cpu},
	}
	if err := k8s.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	cr := testenv.NewObject(webappGVK, ns, "leak", map[string]any{"image": "nginx:1.25", "port": int64(80)})
	cr.SetAnnotations(map[string]string{valuesfrom.Annotation: `
- {kind: Secret, name: leak, valuesKey: replicas, targetPath: replicas}
- {kind: Secret, name: leak, valuesKey: cpu, targetPath: resources.requests.cpu}
`})
	if err := k8s.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	var notes []string
	testenv.Eventually(t, "the install refused, in status and an event", func() error {
		got := get(t, webappGVK, ns, "leak")
		if err := conditionIs(got, "Released", metav1.ConditionFalse, reconcile.ReasonInstallFailed); err != nil {
			return err
		}
		var list eventsv1.EventList
		if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		notes = notes[:0]
		for _, e := range list.Items {
			if e.Reason == reconcile.ReasonInstallFailed {
				notes = append(notes, e.Note)
			}
		}
		if len(notes) == 0 {
			return fmt.Errorf("no %s event", reconcile.ReasonInstallFailed)
		}
		return nil
	})
	status, _ := json.Marshal(get(t, webappGVK, ns, "leak").Object["status"])
	for _, v := range []string{replicas, cpu} {
		if strings.Contains(string(status), v) {
			t.Errorf("status shows the Secret's value %q: %s", v, status)
		}
		for _, n := range notes {
			if strings.Contains(n, v) {
				t.Errorf("event shows the Secret's value %q: %s", v, n)
			}
		}
	}
	if !strings.Contains(string(status), "[redacted]") {
		t.Errorf("status %s, want the schema's error with the value redacted", status)
	}
	t.Logf("status: %s", status)
}
