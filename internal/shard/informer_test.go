package shard

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// TestListWatch_KeepsOwnNamespaces: a list and a watch hold only the shard's
// namespaces, whatever the server sends, and carry the shard's selector to a
// server that filters.
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
		}), mode)
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
