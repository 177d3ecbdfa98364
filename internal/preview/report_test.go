package preview

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func TestSortObjects(t *testing.T) {
	objs := []Object{
		{APIVersion: "v1", Kind: "Service", Namespace: "a", Name: "web"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "a", Name: "web"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "z"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "b"},
		{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Namespace: "a", Name: "web"},
	}
	sortObjects(objs)
	var got []string
	for _, o := range objs {
		got = append(got, o.Kind+"/"+o.Name)
	}
	want := []string{"ConfigMap/b", "ConfigMap/z", "Service/web", "Deployment/web", "Ingress/web"}
	if !slices.Equal(got, want) {
		t.Errorf("sortObjects() = %v, want %v (by group, kind, namespace, name)", got, want)
	}
}

func TestReport_WriteText(t *testing.T) {
	changed := Object{APIVersion: "apps/v1", Kind: "Deployment", Name: "shop", Change: Update, Diff: "--- d (live)\n+++ d (revision 4)\n@@ -1 +1 @@\n-a\n+b\n"}
	created := Object{APIVersion: "v1", Kind: "ConfigMap", Name: "extra", Change: Create, Diff: "--- /dev/null\n+++ c (revision 4)\n@@ -0,0 +1 @@\n+c\n"}
	same := Object{APIVersion: "v1", Kind: "Service", Name: "shop", Change: Unchanged}
	tests := []struct {
		name        string
		report      Report
		want        string
		wantDiffers bool
	}{
		{
			name:   "unchanged: nothing",
			report: Report{Resources: []Resource{{Kind: "WebApp", Namespace: "a", Name: "shop", Release: "webapp-shop", Action: None, Deployed: 3, Objects: []Object{same}}}},
			want:   "",
		},
		{
			name: "upgrade",
			report: Report{Resources: []Resource{{Kind: "WebApp", Namespace: "a", Name: "shop", Release: "webapp-shop", Action: Upgrade, Deployed: 3, Revision: 4,
				ActingAs: "system:serviceaccount:a:deployer", Objects: []Object{created, changed, same}}}},
			want: "# webapp/shop in namespace a: release webapp-shop would be upgraded from revision 3 to 4 (as system:serviceaccount:a:deployer)\n" +
				created.Diff + changed.Diff,
			wantDiffers: true,
		},
		{
			name:        "install",
			report:      Report{Resources: []Resource{{Kind: "WebApp", Namespace: "a", Name: "new", Release: "webapp-new", Action: Install, Revision: 1, Objects: []Object{created}}}},
			want:        "# webapp/new in namespace a: release webapp-new would be installed as revision 1 (as you)\n" + created.Diff,
			wantDiffers: true,
		},
		{
			name: "a note on an unchanged resource",
			report: Report{Resources: []Resource{{Kind: "Database", Namespace: "a", Name: "db", Action: None, Notes: []string{"hook backup failed"},
				Objects: []Object{same}}}},
			want: "# database/db in namespace a: note: hook backup failed\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.report.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("WriteText() =\n%s\nwant\n%s", b.String(), tt.want)
			}
			if got := tt.report.Differs(); got != tt.wantDiffers {
				t.Errorf("Differs() = %v, want %v", got, tt.wantDiffers)
			}
			b.Reset()
			if err := tt.report.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			var back Report
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Resources) != len(tt.report.Resources) ||
				back.Differs() != tt.wantDiffers {
				t.Errorf("WriteJSON() does not read back as the report (%v):\n%s", err, b.String())
			}
		})
	}
}
