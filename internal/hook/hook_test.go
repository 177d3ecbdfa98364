package hook

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type named string

func (n named) Name() string      { return string(n) }
func (n named) Condition() string { return "C" }
func (n named) Reconcile(context.Context, *unstructured.Unstructured, map[string]any) (Result, error) {
	return Result{}, nil
}
func (n named) Finalize(context.Context, *unstructured.Unstructured) error { return nil }

func TestRegistry_Resolve(t *testing.T) {
	var r Registry
	for _, n := range []string{"password", "backup"} {
		if err := r.Add(named(n)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		names   []string
		want    []string
		wantErr string
	}{
		{name: "none", names: nil, want: []string{}},
		{name: "in order", names: []string{"backup", "password"}, want: []string{"backup", "password"}},
		{name: "unknown", names: []string{"password", "teleport"}, wantErr: `no hook named "teleport" is built into rudder (known: backup, password)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Resolve(tt.names)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d hooks, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i].Name() != tt.want[i] {
					t.Errorf("hook %d = %s, want %s", i, got[i].Name(), tt.want[i])
				}
			}
		})
	}
}

func TestRegistry_AddTwice(t *testing.T) {
	var r Registry
	if err := r.Add(named("x")); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(named("x")); err == nil {
		t.Error("the same name registered twice")
	}
}
