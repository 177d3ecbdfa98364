package reconcile_test

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rudder-operator/rudder/test/testenv"
)

// revisions returns the revisions Helm stored for a release, sorted.
func revisions(ns, release string) ([]string, error) {
	return testenv.Revisions(context.Background(), k8s, ns, release)
}

// statusIs checks status fields of a custom resource.
func statusIs(u *unstructured.Unstructured, want map[string]any) error {
	for field, v := range want {
		got, _, _ := unstructured.NestedFieldNoCopy(u.Object, append([]string{"status"}, strings.Split(field, ".")...)...)
		if fmt.Sprint(got) != fmt.Sprint(v) {
			return fmt.Errorf("status.%s = %v, want %v (status: %v)", field, got, v, u.Object["status"])
		}
	}
	return nil
}

func conditionIs(u *unstructured.Unstructured, typ string, want metav1.ConditionStatus, reason string) error {
	c := testenv.Condition(u, typ)
	if c == nil {
		return fmt.Errorf("no %s condition (status: %v)", typ, u.Object["status"])
	}
	if c.Status != want || (reason != "" && c.Reason != reason) {
		return fmt.Errorf("%s = %s/%s (%q), want %s/%s", typ, c.Status, c.Reason, c.Message, want, reason)
	}
	if c.ObservedGeneration != u.GetGeneration() {
		return fmt.Errorf("%s observedGeneration %d, want %d", typ, c.ObservedGeneration, u.GetGeneration())
	}
	return nil
}
