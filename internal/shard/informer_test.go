package shard

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestListWatch_KeepsOwnNamespaces: a list and a watch hold only the shard's
// namespaces, whatever the server sends, and carry the shard's selector to a
// server that filters. It counts what it received, own and others'.
func TestListWatch_KeepsOwnNamespaces(t *testing.T) {
	s := Shard{Index: 1, Count: 3}
	var pods []corev1.Pod
	for n := 0; n < 30; n++ {
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", n), Name: "p"}})
	}
	fw := watch.NewFake()
	for _, mode := range []Mode{ModeServer, ModeClient} {
		var sent []string
		lw := s.listWatch(toolscache.ToListerWatcherWithContext(&toolscache.ListWatch{
			ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
				sent = append(sent, opts.ShardSelector)
				return &corev1.PodList{Items: append([]corev1.Pod(nil), pods...)}, nil
			},
			WatchFuncWithContext: func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				sent = append(sent, opts.ShardSelector)
				return fw, nil
			},
		}), mode, "Pod-"+string(mode))
		list, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		kept := list.(*corev1.PodList).Items
		own := 0
		for _, p := range pods {
			if s.Owns(p.Namespace) {
				own++
			}
		}
		if len(kept) != own || own == 0 {
			t.Errorf("%s: list kept %d pods, want the shard's %d", mode, len(kept), own)
		}
		for _, p := range kept {
			if !s.Owns(p.Namespace) {
				t.Errorf("%s: list kept pod of namespace %s, another shard's", mode, p.Namespace)
			}
		}
		w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for i := range pods {
				fw.Add(&pods[i])
			}
			fw.Action(watch.Bookmark, &corev1.Pod{})
		}()
		got := 0
		for e := range w.ResultChan() {
			if e.Type == watch.Bookmark {
				break
			}
			if p := e.Object.(*corev1.Pod); !s.Owns(p.Namespace) {
				t.Errorf("%s: watch passed pod of namespace %s, another shard's", mode, p.Namespace)
			}
			got++
		}
		w.Stop()
		fw = watch.NewFake()
		if got != own {
			t.Errorf("%s: watch passed %d events, want the shard's %d", mode, got, own)
		}
		for _, source := range []string{"list", "watch"} {
			c := countersOf("Pod-"+string(mode), source)
			if own, others := testutil.ToFloat64(c.own), testutil.ToFloat64(c.others); own != float64(got) || others != float64(len(pods)-got) {
				t.Errorf("%s: counted %v own and %v others' from %s, want %d and %d", mode, own, others, source, got, len(pods)-got)
			}
		}
		want := ""
		if mode == ModeServer {
			want = s.Selector()
		}
		for _, sel := range sent {
			if sel != want {
				t.Errorf("%s: sent shard selector %q, want %q", mode, sel, want)
			}
		}
	}
}

func TestKindOf(t *testing.T) {
	meta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "Secret"}}
	for obj, want := range map[runtime.Object]string{&corev1.Service{}: "Service", meta: "Secret"} {
		if got := kindOf(obj); got != want {
			t.Errorf("kindOf(%T) = %q, want %q", obj, got, want)
		}
	}
}

// TestListWatch_Unsharded: one shard of all passes everything, sends no
// selector, and counts what it received as its own.
func TestListWatch_Unsharded(t *testing.T) {
	pods := []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}}, {ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "p"}}}
	lw := Shard{}.listWatch(toolscache.ToListerWatcherWithContext(&toolscache.ListWatch{
		ListWithContextFunc: func(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if opts.ShardSelector != "" {
				t.Errorf("sent shard selector %q, want none", opts.ShardSelector)
			}
			return &corev1.PodList{Items: pods}, nil
		},
	}), ModeServer, "Pod-unsharded")
	list, err := lw.ListWithContext(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := countersOf("Pod-unsharded", "list")
	if n := len(list.(*corev1.PodList).Items); n != 2 || testutil.ToFloat64(c.own) != 2 || testutil.ToFloat64(c.others) != 0 {
		t.Errorf("kept %d pods, counted %v own and %v others'; want 2, 2 and 0", n, testutil.ToFloat64(c.own), testutil.ToFloat64(c.others))
	}
}
