package values

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "x.io/v1", "kind": "X"}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	return u
}

func TestFor(t *testing.T) {
	tests := []struct {
		name      string
		spec      map[string]any
		overrides map[string]string
		want      string // JSON of the result
		wantErr   bool
	}{
		{name: "no spec", want: `{}`},
		{name: "spec copied", spec: map[string]any{"image": "nginx", "port": int64(80)}, want: `{"image":"nginx","port":80}`},
		{
			name:      "override nested key wins over spec",
			spec:      map[string]any{"image": map[string]any{"repo": "nginx", "tag": "1.25"}},
			overrides: map[string]string{"image.repo": "mirror/nginx"},
			want:      `{"image":{"repo":"mirror/nginx","tag":"1.25"}}`,
		},
		{name: "override adds key", spec: map[string]any{}, overrides: map[string]string{"a.b": "1"}, want: `{"a":{"b":1}}`},
		{name: "malformed override", overrides: map[string]string{"a[": "x"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := For(obj(tt.spec), tt.overrides)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if g := mustJSON(t, got); g != tt.want {
				t.Errorf("got %s, want %s", g, tt.want)
			}
		})
	}
}

func TestFor_DoesNotAliasSpec(t *testing.T) {
	spec := map[string]any{"config": map[string]any{"A": "1"}}
	o := obj(spec)
	got, err := For(o, map[string]string{"config.A": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if spec["config"].(map[string]any)["A"] != "1" {
		t.Errorf("the custom resource's spec was modified: %v", spec)
	}
	if got["config"].(map[string]any)["A"] != int64(2) {
		t.Errorf("override not applied: %v", got)
	}
}

func TestDigest(t *testing.T) {
	a := map[string]any{"x": int64(1), "y": map[string]any{"b": "2", "a": "1"}}
	b := map[string]any{"y": map[string]any{"a": "1", "b": "2"}, "x": int64(1)}
	c := map[string]any{"x": int64(2), "y": map[string]any{"a": "1", "b": "2"}}
	tests := []struct {
		name  string
		l, r  map[string]any
		equal bool
	}{
		{name: "same content, other order", l: a, r: b, equal: true},
		{name: "different content", l: a, r: c, equal: false},
		{name: "empty and nil", l: map[string]any{}, r: nil, equal: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, r := Digest(tt.l), Digest(tt.r)
			if (l == r) != tt.equal {
				t.Errorf("Digest equal = %v, want %v (%s, %s)", l == r, tt.equal, l, r)
			}
			if len(l) != DigestLength {
				t.Errorf("len = %d, want %d", len(l), DigestLength)
			}
		})
	}
}
