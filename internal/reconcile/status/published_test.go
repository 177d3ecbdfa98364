package status

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPublish(t *testing.T) {
	cm := func(name, key string, data map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		u.SetName(name)
		if key != "" {
			u.SetAnnotations(map[string]string{AnnotationStatusKey: key})
		}
		if data != nil {
			u.Object["data"] = data
		}
		return u
	}
	secret := cm("creds", "creds", map[string]any{"password": "c2VjcmV0"})
	secret.SetKind("Secret")
	netData := map[string]any{"cidr": "10.0.0.0/8", "gateway": "10.0.0.1"}
	tests := []struct {
		name       string
		objs       []*unstructured.Unstructured // nil: no deployed revision
		wantKnown  bool
		wantValues map[string]any
		wantErrs   []string // parts of the refusal messages, in order
	}{
		{name: "no deployed revision", wantValues: map[string]any{}},
		{
			name: "nothing published", objs: []*unstructured.Unstructured{cm("plain", "", netData)},
			wantKnown: true, wantValues: map[string]any{},
		},
		{
			name: "one ConfigMap", objs: []*unstructured.Unstructured{cm("plain", "", nil), cm("net", "network", netData)},
			wantKnown: true, wantValues: map[string]any{"network": netData},
		},
		{
			name: "no data", objs: []*unstructured.Unstructured{cm("net", "network", nil)},
			wantKnown: true, wantValues: map[string]any{"network": map[string]any{}},
		},
		{
			name: "rudder's own key", objs: []*unstructured.Unstructured{cm("a", "phase", netData), cm("b", "conditions", netData)},
			wantKnown: true, wantValues: map[string]any{},
			wantErrs: []string{`ConfigMap/a: status key "phase" belongs to rudder`, `ConfigMap/b: status key "conditions" belongs to rudder`},
		},
		{
			name: "a hook's key", objs: []*unstructured.Unstructured{cm("a", "lastBackup", netData)},
			wantKnown: true, wantValues: map[string]any{},
			wantErrs: []string{`ConfigMap/a: status key "lastBackup" belongs to rudder or a hook`},
		},
		{
			name: "two objects, one key", objs: []*unstructured.Unstructured{cm("a", "network", netData), cm("b", "network", netData)},
			wantKnown: true, wantValues: map[string]any{},
			wantErrs: []string{`ConfigMap/b: status key "network" is published by ConfigMap/a too`},
		},
		{
			name: "not a field name", objs: []*unstructured.Unstructured{cm("a", "my-network", netData)},
			wantKnown: true, wantValues: map[string]any{},
			wantErrs: []string{`rudder.dev/status-key="my-network" is not a status field name`},
		},
		{
			name: "a Secret", objs: []*unstructured.Unstructured{secret},
			wantKnown: true, wantValues: map[string]any{},
			wantErrs: []string{"Secret/creds: a Secret's data is never copied into status"},
		},
		{
			name: "data not strings", objs: []*unstructured.Unstructured{cm("a", "network", map[string]any{"n": int64(1)})},
			wantKnown: true, wantValues: map[string]any{},
			wantErrs: []string{"ConfigMap/a: .data.n is a int64, want a string"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &Observation{}
			if tt.objs != nil {
				o.Deployed = &Revision{Objects: tt.objs}
			}
			p := Publish(o, TakenKeys(map[string]any{"lastBackup": nil}))
			if p.known != tt.wantKnown {
				t.Errorf("known = %v, want %v", p.known, tt.wantKnown)
			}
			if !reflect.DeepEqual(p.values, tt.wantValues) {
				t.Errorf("values = %v, want %v", p.values, tt.wantValues)
			}
			if len(p.errs) != len(tt.wantErrs) {
				t.Fatalf("refusals %q, want %d", p.errs, len(tt.wantErrs))
			}
			for i, want := range tt.wantErrs {
				if !strings.Contains(p.errs[i], want) {
					t.Errorf("refusal %q does not contain %q", p.errs[i], want)
				}
			}
		})
	}
}

func TestPublication_IntoAndApply(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	netData := map[string]any{"cidr": "10.0.0.0/8"}
	tests := []struct {
		name       string
		p          Publication
		prev       []string
		next       map[string]any // status before apply
		wantNext   map[string]any
		wantKeys   []string
		wantStatus metav1.ConditionStatus // "" means no Published condition
	}{
		{
			name: "published",
			p:    Publication{known: true, values: map[string]any{"network": netData}, keys: []string{"network"}, from: []string{"status.network from ConfigMap/n"}},
			next: map[string]any{"stamp": "ok"}, wantNext: map[string]any{"stamp": "ok", "network": netData},
			wantKeys: []string{"network"}, wantStatus: metav1.ConditionTrue,
		},
		{
			name: "no longer published", p: Publication{known: true, values: map[string]any{}}, prev: []string{"network"},
			next: map[string]any{"stamp": "ok", "network": netData}, wantNext: map[string]any{"stamp": "ok"},
		},
		{
			name: "refused, the old key goes", p: Publication{known: true, values: map[string]any{}, errs: []string{"ConfigMap/n: no"}},
			prev: []string{"network"}, next: map[string]any{"network": netData}, wantNext: map[string]any{},
			wantStatus: metav1.ConditionFalse,
		},
		{
			name: "unknown keeps what was written", p: Publication{values: map[string]any{}}, prev: []string{"network"},
			next: map[string]any{"network": netData}, wantNext: map[string]any{"network": netData}, wantKeys: []string{"network"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Status{ObservedGeneration: 3}
			tt.p.Into(&st, tt.prev, now)
			tt.p.Apply(tt.next, tt.prev)
			if !reflect.DeepEqual(tt.next, tt.wantNext) {
				t.Errorf("status = %v, want %v", tt.next, tt.wantNext)
			}
			if !reflect.DeepEqual(st.Published, tt.wantKeys) {
				t.Errorf("published = %v, want %v", st.Published, tt.wantKeys)
			}
			c := meta.FindStatusCondition(st.Conditions, ConditionPublished)
			switch {
			case tt.wantStatus == "" && c != nil:
				t.Errorf("Published condition %v, want none", c)
			case tt.wantStatus != "" && (c == nil || c.Status != tt.wantStatus || c.ObservedGeneration != 3):
				t.Errorf("Published condition %v, want %s at generation 3", c, tt.wantStatus)
			}
		})
	}
}

func TestMergePatch(t *testing.T) {
	tests := []struct {
		name          string
		current, next map[string]any
		want          map[string]any
	}{
		{
			name:    "removed key is null",
			current: map[string]any{"phase": "Running", "gone": "x"}, next: map[string]any{"phase": "Running"},
			want: map[string]any{"phase": "Running", "gone": nil},
		},
		{
			name:    "removed nested key is null",
			current: map[string]any{"network": map[string]any{"cidr": "10.0.0.0/8", "netmask": "255.0.0.0"}},
			next:    map[string]any{"network": map[string]any{"cidr": "fd00::/64"}},
			want:    map[string]any{"network": map[string]any{"cidr": "fd00::/64", "netmask": nil}},
		},
		{
			name:    "a map replacing a string is sent whole",
			current: map[string]any{"network": "old"}, next: map[string]any{"network": map[string]any{"cidr": "x"}},
			want: map[string]any{"network": map[string]any{"cidr": "x"}},
		},
		{
			name: "nothing cached", next: map[string]any{"phase": "Pending"}, want: map[string]any{"phase": "Pending"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MergePatch(tt.current, tt.next); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("mergePatch = %v, want %v", got, tt.want)
			}
		})
	}
}
