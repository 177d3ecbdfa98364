package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clientWorkers is how many requests the bench itself makes at once when it
// creates, patches or deletes custom resources.
const clientWorkers = 8

// webAppName names the i-th WebApp of a run.
func webAppName(i int) string { return fmt.Sprintf("app-%05d", i) }

// newWebApp returns the i-th WebApp of kind gvk in ns, not yet created.
func newWebApp(gvk schema.GroupVersionKind, ns string, i int, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(webAppName(i))
	return u
}

// createWebApps creates n WebApps of kind gvk in ns.
func createWebApps(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns string, n int, spec map[string]any) error {
	return parallel(n, clientWorkers, func(i int) error {
		return c.Create(ctx, newWebApp(gvk, ns, i, spec))
	})
}

// patchImage sets spec.image on the n WebApps of kind gvk in ns.
func patchImage(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns string, n int, image string) error {
	patch := client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"spec":{"image":%q}}`, image)))
	return parallel(n, clientWorkers, func(i int) error {
		return c.Patch(ctx, newWebApp(gvk, ns, i, nil), patch)
	})
}

// deleteWebApps deletes every WebApp of kind gvk in ns, one request each from
// clientWorkers workers, as users and scripts delete them. One DeleteCollection
// of 1,000 outlasts the API server's request timeout on this machine, and the
// timeout reaches the client as a reset stream rather than a status.
func deleteWebApps(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns string) error {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return err
	}
	return parallel(len(list.Items), clientWorkers, func(i int) error {
		return client.IgnoreNotFound(c.Delete(ctx, &list.Items[i]))
	})
}

// deploymentsReady reports whether ns holds n Deployments, each rolled out
// with image: its controller has seen its generation, and all of its
// replicas are updated, ready and the only ones. The string says how far it is.
func deploymentsReady(ctx context.Context, c client.Client, ns string, n int, image string) (bool, string, error) {
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return false, "", err
	}
	ready := 0
	for i := range list.Items {
		if deploymentRolledOut(&list.Items[i], image) {
			ready++
		}
	}
	return ready == n && len(list.Items) == n, fmt.Sprintf("%d/%d Deployments rolled out and ready (%d exist)", ready, n, len(list.Items)), nil
}

// deploymentRolledOut is true when d runs image on all of its wanted
// replicas, ready, with no old replica left.
func deploymentRolledOut(d *appsv1.Deployment, image string) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	cs := d.Spec.Template.Spec.Containers
	return len(cs) > 0 && cs[0].Image == image &&
		d.Status.ObservedGeneration == d.Generation &&
		d.Status.UpdatedReplicas == want && d.Status.ReadyReplicas == want && d.Status.Replicas == want
}

// webAppsRunning reports whether all n WebApps of kind gvk in ns report
// phase Running for their current generation (rudder's status).
func webAppsRunning(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns string, n int) (bool, string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		return false, "", err
	}
	running := 0
	for _, u := range list.Items {
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if phase == "Running" && observed == u.GetGeneration() {
			running++
		}
	}
	return running == n, fmt.Sprintf("%d/%d WebApps Running", running, n), nil
}

// gone reports whether ns holds no WebApp of kind gvk (none for the floor,
// gvk nil), no Deployment, no Service and no Helm release Secret.
func gone(ctx context.Context, c client.Client, gvk *schema.GroupVersionKind, ns string) (bool, string, error) {
	lists := map[string]client.ObjectList{
		"Deployments": &appsv1.DeploymentList{}, "Services": &corev1.ServiceList{}, "Helm release Secrets": &corev1.SecretList{},
	}
	if gvk != nil {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		lists["WebApps"] = l
	}
	left, state := 0, ""
	for what, l := range lists {
		opts := []client.ListOption{client.InNamespace(ns)}
		if what == "Helm release Secrets" {
			opts = append(opts, client.MatchingLabels{"owner": "helm"})
		}
		if err := c.List(ctx, l, opts...); err != nil {
			return false, "", err
		}
		if k := meta.LenList(l); k > 0 {
			left += k
			state += fmt.Sprintf(" %d %s", k, what)
		}
	}
	if left == 0 {
		return true, "nothing left", nil
	}
	return false, "left:" + state, nil
}

// churn deletes a share of the pods in ns every cfg.ChurnEvery for d, so
// that the Deployments' statuses keep changing. It returns how many pods it
// deleted.
func churn(ctx context.Context, c client.Client, ns string, d time.Duration, cfg config) (int, error) {
	deleted := 0
	end := time.Now().Add(d)
	for {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return deleted, err
		}
		var live []*corev1.Pod
		for i := range pods.Items {
			if pods.Items[i].DeletionTimestamp == nil {
				live = append(live, &pods.Items[i])
			}
		}
		k := min(max(int(float64(len(live))*cfg.ChurnShare+0.5), 1), cfg.ChurnMax, len(live))
		rand.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		err := parallel(k, clientWorkers, func(i int) error {
			return client.IgnoreNotFound(c.Delete(ctx, live[i]))
		})
		if err != nil {
			return deleted, fmt.Errorf("deleting pods: %w", err)
		}
		deleted += k
		wait := min(cfg.ChurnEvery, time.Until(end))
		if wait <= 0 {
			return deleted, nil
		}
		select {
		case <-ctx.Done():
			return deleted, ctx.Err()
		case <-time.After(wait):
		}
		if !time.Now().Before(end) {
			return deleted, nil
		}
	}
}

// check is one poll of a convergence: done, and a description of the state.
type check func(ctx context.Context) (bool, string, error)

// pollPeriod is how often waitFor polls. A poll lists every Deployment (and
// WebApp) of the column: at 1,000 of each, polling every second took a third
// of a core of the API server that every column shares.
const pollPeriod = 2 * time.Second

// waitFor polls check every pollPeriod until it is done, and returns how long
// that took from start (so it may be late by up to pollPeriod). It fails
// after timeout with the last state.
func waitFor(ctx context.Context, start time.Time, timeout time.Duration, what string, ok check) (time.Duration, error) {
	return waitForEvery(ctx, start, timeout, pollPeriod, what, ok)
}

// waitForEvery is waitFor polling every period.
func waitForEvery(ctx context.Context, start time.Time, timeout, period time.Duration, what string, ok check) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "not checked yet"
	for {
		done, state, err := ok(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			last = err.Error()
		case err == nil:
			last = state
		}
		if done && err == nil {
			return time.Since(start), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%s: not done after %s: %s", what, timeout, last)
		case <-time.After(period):
		}
	}
}

// all combines checks: done when every one is done.
func all(checks ...check) check {
	return func(ctx context.Context) (bool, string, error) {
		done, state := true, ""
		for _, c := range checks {
			ok, s, err := c(ctx)
			if err != nil {
				return false, "", err
			}
			done = done && ok
			if state != "" {
				state += "; "
			}
			state += s
		}
		return done, state, nil
	}
}

// parallel runs fn(0..n-1) on workers goroutines and returns the errors joined
// (at most a few of them, with a count).
func parallel(n, workers int, fn func(i int) error) error {
	next := make(chan int)
	var (
		mu     sync.Mutex
		errs   []error
		failed int
		wg     sync.WaitGroup
	)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					failed++
					if len(errs) < 3 {
						errs = append(errs, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	if failed > len(errs) {
		errs = append(errs, fmt.Errorf("and %d more errors", failed-len(errs)))
	}
	return errors.Join(errs...)
}
