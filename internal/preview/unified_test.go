package preview

import "testing"

func TestUnified(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{name: "equal", a: "a\nb\n", b: "a\nb\n", want: ""},
		{
			name: "one line changed among many",
			a:    "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			b:    "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			want: "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n",
		},
		{name: "created", a: "", b: "x\ny\n", want: "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{name: "deleted", a: "x\n", b: "", want: "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n"},
		{
			name: "two hunks",
			a:    "a\n1\n2\n3\n4\n5\n6\n7\n8\nb\n",
			b:    "A\n1\n2\n3\n4\n5\n6\n7\n8\nB\n",
			want: "--- a\n+++ b\n@@ -1,4 +1,4 @@\n-a\n+A\n 1\n 2\n 3\n@@ -7,4 +7,4 @@\n 6\n 7\n 8\n-b\n+B\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unified("a", "b", tt.a, tt.b); got != tt.want {
				t.Errorf("unified() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
