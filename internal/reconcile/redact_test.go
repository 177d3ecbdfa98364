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

	"github.com/rudder-operator/rudder/internal/reconcile/status"
	"github.com/rudder-operator/rudder/internal/valuesfrom"
	"github.com/rudder-operator/rudder/test/testenv"
)

// A value taken from a Secret that the chart's schema or the API server
// refuses is quoted by the error: neither the resource's status nor its
// events show it.
func TestReconciler_SecretValuesStayOutOfStatusAndEvents(t *testing.T) {
	tests := []struct {
		name, value, targetPath string
	}{
		// A type error names no value; a pattern error quotes it.
		{name: "refused by the schema", value: "hunter2 cpu request", targetPath: "resources.requests.cpu"},
		{name: "refused by the API server", value: "hunter2 not a label!", targetPath: "nodeSelector.disk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := namespace(t)
			secret := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "leak"},
				StringData: map[string]string{"replicas": "hunter2-replicas", "value": tt.value},
			}
			if err := k8s.Create(ctx, secret); err != nil {
				t.Fatal(err)
			}
			cr := testenv.NewObject(webappGVK, ns, "leak", map[string]any{"image": "nginx:1.25", "port": int64(80)})
			cr.SetAnnotations(map[string]string{valuesfrom.Annotation: fmt.Sprintf(`
- {kind: Secret, name: leak, valuesKey: replicas, targetPath: replicas}
- {kind: Secret, name: leak, valuesKey: value, targetPath: %s}
`, tt.targetPath)})
			if err := k8s.Create(ctx, cr); err != nil {
				t.Fatal(err)
			}
			var notes []string
			testenv.Eventually(t, "the install refused, in status and an event", func() error {
				got := get(t, webappGVK, ns, "leak")
				if err := conditionIs(got, "Released", metav1.ConditionFalse, status.ReasonInstallFailed); err != nil {
					return err
				}
				var list eventsv1.EventList
				if err := k8s.List(ctx, &list, client.InNamespace(ns)); err != nil {
					return err
				}
				notes = notes[:0]
				for _, e := range list.Items {
					if e.Reason == status.ReasonInstallFailed {
						notes = append(notes, e.Note)
					}
				}
				if len(notes) == 0 {
					return fmt.Errorf("no %s event", status.ReasonInstallFailed)
				}
				return nil
			})
			status, _ := json.Marshal(get(t, webappGVK, ns, "leak").Object["status"])
			for _, v := range []string{"hunter2-replicas", tt.value} {
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
				t.Errorf("status %s, want the error with the value redacted", status)
			}
			t.Logf("Released: %s", testenv.Condition(get(t, webappGVK, ns, "leak"), "Released").Message)
		})
	}
}
