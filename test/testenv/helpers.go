package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Revisions lists the revisions Helm stored for a release in namespace ns, as
// sorted "<revision>:<status>" strings; none means the release is gone.
func Revisions(ctx context.Context, c client.Client, ns, release string) ([]string, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": release}); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Items))
	for _, s := range list.Items {
		out = append(out, s.Labels["version"]+":"+s.Labels["status"])
	}
	sort.Strings(out)
	return out, nil
}

// RevisionsAre checks the revisions Helm stored for release as
// "<revision>:<status>", in any order; none means the release is gone.
func RevisionsAre(ctx context.Context, c client.Client, ns, release string, want ...string) error {
	got, err := Revisions(ctx, c, ns, release)
	if err != nil {
		return err
	}
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		return fmt.Errorf("release %s has revisions %v, want %v", release, got, want)
	}
	return nil
}

// RunWithManager runs the tests of m while mgr runs, then stops mgr; it
// returns the exit code for TestMain, failing it when mgr stopped with an error.
func RunWithManager(m *testing.M, mgr manager.Manager) int {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return code
}

// Gone turns the error of a Get into nil when the object is not found, and
// into an error when it was found: for Eventually, waiting for a deletion.
func Gone(err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err == nil:
		return errors.New("still exists")
	default:
		return err
	}
}
