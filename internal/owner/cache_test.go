package owner_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/internal/owner"
	"github.com/rudder-operator/rudder/test/testenv"
)

var webapp = schema.GroupKind{Group: "webapp.my.domain", Kind: "WebApp"}

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets int
}

func (r *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.gets++
	return r.Reader.Get(ctx, key, obj, opts...)
}

// TestNewCache_HoldsOnlyMetadataOfLabeledObjects creates, in a namespace,
// 60 ConfigMaps of 400 KB that carry LabelRelease and belong to no
// resource rudder serves, as anyone who may create a ConfigMap can: the
// cache of the releases' objects must hold none of their data, and grow by
// less than 10 MiB.
func TestNewCache_HoldsOnlyMetadataOfLabeledObjects(t *testing.T) {
	cfg := testenv.StartFor(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.Namespace(t, k8s, "owner-")

	const n, size = 60, 400 << 10
	for i := range n {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("big-%d", i),
				Labels: map[string]string{owner.LabelRelease: "webapp-forged"}},
			Data: map[string]string{"blob": strings.Repeat(string(rune('a'+i%26)), size)},
		}
		if err := k8s.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	ref := metav1.OwnerReference{APIVersion: "webapp.my.domain/v1", Kind: "WebApp", Name: "front", UID: "uid-front", Controller: &yes}
	release := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "front", OwnerReferences: []metav1.OwnerReference{ref},
			Labels: map[string]string{owner.LabelRelease: "webapp-front"}},
		Data: map[string]string{"message": "hello"},
	}
	if err := k8s.Create(ctx, release); err != nil {
		t.Fatal(err)
	}

	before := liveHeap()
	c, err := owner.NewCache(cfg, cache.Options{Scheme: scheme.Scheme}, []schema.GroupKind{webapp})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if _, err := c.GetInformer(ctx, &corev1.ConfigMap{}); err != nil {
		t.Fatal(err)
	}
	var list corev1.ConfigMapList
	testenv.Eventually(t, "the cache holds every ConfigMap", func() error {
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) != n+1 {
			return fmt.Errorf("%d ConfigMaps, want %d", len(list.Items), n+1)
		}
		return nil
	})
	list = corev1.ConfigMapList{}
	grown := liveHeap() - before
	t.Logf("live heap grown by %.1f MiB with %d ConfigMaps of %d KB cached", float64(grown)/(1<<20), n, size>>10)
	if grown >= 10<<20 {
		t.Errorf("live heap grown by %d bytes, want less than 10 MiB", grown)
	}

	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if len(cm.Data)+len(cm.BinaryData) > 0 {
			t.Errorf("ConfigMap %s held with its data", cm.Name)
		}
		_, stub := cm.Annotations[owner.AnnotationMetadataOnly]
		if want := cm.Name != "front"; stub != want {
			t.Errorf("ConfigMap %s held as metadata only: %v, want %v", cm.Name, stub, want)
		}
	}

	t.Run("Whole", func(t *testing.T) {
		want := func(name string, data map[string]any) *unstructured.Unstructured {
			u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"namespace": ns, "name": name}, "data": data}}
			return u
		}
		tests := []struct {
			name      string
			want      *unstructured.Unstructured
			wantData  map[string]string
			wantReads int
		}{
			{name: "data as rendered: from the cache, with the rendered data",
				want: want("front", map[string]any{"message": "hello"}), wantData: map[string]string{"message": "hello"}},
			{name: "data changed since rendered: read from the API server",
				want: want("front", map[string]any{"message": "bye"}), wantData: map[string]string{"message": "hello"}, wantReads: 1},
			{name: "held as metadata only: read from the API server",
				want: want("big-1", map[string]any{}), wantData: map[string]string{"blob": strings.Repeat("b", size)}, wantReads: 1},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				held := &corev1.ConfigMap{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(tt.want), held, client.UnsafeDisableDeepCopy); err != nil {
					t.Fatal(err)
				}
				reader := &countingReader{Reader: k8s}
				got, err := owner.Whole(ctx, reader, tt.want, held)
				if err != nil {
					t.Fatal(err)
				}
				cm, ok := got.(*corev1.ConfigMap)
				if !ok {
					t.Fatalf("got a %T, want a *ConfigMap", got)
				}
				if fmt.Sprint(cm.Data) != fmt.Sprint(tt.wantData) {
					t.Errorf("data of %d keys, want %d", len(cm.Data), len(tt.wantData))
				}
				if reader.gets != tt.wantReads {
					t.Errorf("%d reads from the API server, want %d", reader.gets, tt.wantReads)
				}
				for _, k := range []string{owner.AnnotationDataDigest, owner.AnnotationMetadataOnly} {
					if _, ok := cm.Annotations[k]; ok {
						t.Errorf("annotation %s on the object returned", k)
					}
				}
				if _, ok := held.GetAnnotations()[owner.AnnotationDataDigest]; !ok && tt.want.GetName() == "front" {
					t.Error("Whole changed the cache's own object")
				}
			})
		}
	})
}

// liveHeap returns the bytes of the heap that are reachable, after a
// collection.
func liveHeap() int64 {
	var m runtime.MemStats
	for range 2 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
