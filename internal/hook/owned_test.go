package hook

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func reports(created time.Time) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("database.my.domain/v1")
	u.SetKind("Database")
	u.SetNamespace("team-a")
	u.SetName("reports")
	u.SetUID("uid-reports")
	u.SetCreationTimestamp(metav1.NewTime(created))
	return u
}

func TestControls(t *testing.T) {
	db := reports(time.Now())
	ref := OwnerReference(db)
	other := ref
	other.UID = "uid-other"
	notController := ref
	notController.Controller = ptr.To(false)
	tests := []struct {
		name string
		refs []metav1.OwnerReference
		want bool
	}{
		{name: "its controller reference", refs: []metav1.OwnerReference{ref}, want: true},
		{name: "none"},
		{name: "the same name, another UID (a Database deleted and created again)", refs: []metav1.OwnerReference{other}},
		{name: "a reference that is not the controller", refs: []metav1.OwnerReference{notController}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{OwnerReferences: tt.refs}}
			if got := Controls(db, o); got != tt.want {
				t.Errorf("Controls = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMadeByRelease(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	db := reports(now)
	tests := []struct {
		name        string
		created     time.Time
		annotations map[string]string
		want        bool
	}{
		{name: "made after the Database", created: now.Add(time.Second), want: true},
		{name: "made in the same second", created: now, want: true},
		{name: "there before the Database", created: now.Add(-time.Second)},
		{name: "made after it, but for another Database", created: now.Add(time.Second),
			annotations: map[string]string{AnnotationGeneratedFor: "Database/other"}},
		{name: "already recorded as its own: IsGeneratedFor says so", created: now.Add(time.Second),
			annotations: map[string]string{AnnotationGeneratedFor: "Database/reports"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
				CreationTimestamp: metav1.NewTime(tt.created), Annotations: tt.annotations}}
			if got := MadeByRelease(db, o); got != tt.want {
				t.Errorf("MadeByRelease = %v, want %v", got, tt.want)
			}
		})
	}
}

// An object made for a resource names its UID: one made for an earlier
// resource of the same name is not the later one's. One marked by the name
// alone, as rudder marked them before, is the resource's only when it is no
// older than the resource.
func TestIsGeneratedFor(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	db := reports(now)
	tests := []struct {
		name       string
		annotation string
		created    time.Time
		want       bool
	}{
		{name: "made for it", annotation: "Database/reports/uid-reports", created: now.Add(time.Hour), want: true},
		{name: "made for an earlier Database of the name", annotation: "Database/reports/uid-earlier", created: now.Add(-time.Hour)},
		{name: "named after it by someone, another UID", annotation: "Database/reports/uid-other", created: now.Add(time.Hour)},
		{name: "marked by name by an earlier rudder, after it was created", annotation: "Database/reports", created: now.Add(time.Hour), want: true},
		{name: "marked by name, before it was created: an earlier Database's", annotation: "Database/reports", created: now.Add(-time.Hour)},
		{name: "another kind", annotation: "WebApp/reports/uid-reports", created: now},
		{name: "not marked", created: now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(tt.created)}}
			if tt.annotation != "" {
				o.Annotations = map[string]string{AnnotationGeneratedFor: tt.annotation}
			}
			if got := IsGeneratedFor(db, o); got != tt.want {
				t.Errorf("IsGeneratedFor = %v, want %v", got, tt.want)
			}
			if tt.annotation != "" && GeneratedForName(o) != "Database/reports" && tt.name != "another kind" {
				t.Errorf("GeneratedForName = %q, want Database/reports", GeneratedForName(o))
			}
		})
	}
}

func TestNotOwned(t *testing.T) {
	db := reports(time.Now())
	for _, kept := range []bool{false, true} {
		c := NotOwned(db, "CronJob", "reports-backup", "runs no backup", kept)
		want := "CronJob reports-backup exists but was not made by rudder for Database reports (uid uid-reports), so rudder leaves it alone " +
			"and runs no backup. Delete or rename that CronJob, or give this Database another name"
		if c.Status != metav1.ConditionFalse || c.Reason != ReasonObjectNotOwned || !strings.HasPrefix(c.Message, want) {
			t.Errorf("NotOwned(kept %v) = %+v, want False %s %q", kept, c, ReasonObjectNotOwned, want)
		}
		if hint := "kubectl annotate cronjob reports-backup rudder.dev/generated-for=Database/reports/uid-reports --overwrite"; strings.Contains(c.Message, hint) != kept {
			t.Errorf("NotOwned(kept %v) = %q: says %q %v", kept, c.Message, hint, !kept)
		}
	}
}
