package password

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rudder-operator/rudder/test/testenv"
)

var k8s client.Client

// TestMain runs the hook against a real API server (envtest).
func TestMain(m *testing.M) {
	if testenv.FuzzOnly() {
		os.Exit(m.Run()) // the fuzz targets read specs: they need no server
	}
	env, cfg, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k8s, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	_ = env.Stop()
	os.Exit(code)
}

func TestGenerate(t *testing.T) {
	pw, err := Generate(bytes.NewReader(bytes.Repeat([]byte{0, 1, 61, 62, 247, 248, 255}, 100)), Length)
	if err != nil {
		t.Fatal(err)
	}
	if len(pw) != Length {
		t.Fatalf("len = %d, want %d", len(pw), Length)
	}
	// 0→A, 1→B, 61→9, 62 wraps to A, 247 to 9; 248 and 255 are rejected (bias).
	if !strings.HasPrefix(pw, "AB9A9AB9A9") {
		t.Errorf("password = %q, want it to start with AB9A9AB9A9", pw)
	}
	if _, err := Generate(bytes.NewReader(make([]byte, 10)), Length); err == nil {
		t.Error("no error when randomness runs out")
	}
	a, _ := Generate(nil2rand(), Length)
	b, _ := Generate(nil2rand(), Length)
	if a == b {
		t.Error("two generated passwords are equal")
	}
	for _, c := range a {
		if !strings.ContainsRune(alphabet, c) {
			t.Errorf("password holds %q, outside the alphabet", c)
		}
	}
}

func nil2rand() *bytes.Reader {
	h := &Hook{}
	buf := make([]byte, 4096)
	_, _ = h.rand().Read(buf)
	return bytes.NewReader(buf)
}

func namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "pw-"}}
	if err := k8s.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func database(ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion("database.my.domain/v1")
	u.SetKind("Database")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID("uid-" + ns + "-" + name))
	return u
}

func secret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	var s corev1.Secret
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestHook_GeneratesOnceAndNeverChanges(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	h := &Hook{Client: k8s, Reader: k8s}
	db := database(ns, "orders", map[string]any{"database": "shop"})
	res, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	s := secret(t, ns, "orders-credentials")
	pw := string(s.Data["password"])
	if len(pw) < 32 {
		t.Errorf("password of %d characters, want at least 32", len(pw))
	}
	for key, want := range map[string]string{"username": Username, "host": "orders." + ns + ".svc", "port": "5432", "database": "shop"} {
		if got := string(s.Data[key]); got != want {
			t.Errorf("key %s = %q, want %q", key, got, want)
		}
	}
	if uri := string(s.Data["uri"]); uri != fmt.Sprintf("postgresql://admin:%s@orders.%s.svc:5432/shop", pw, ns) {
		t.Errorf("uri = %q", uri)
	}
	if len(s.OwnerReferences) != 0 {
		t.Error("the generated Secret has an owner: it would go with the Database")
	}
	if res.Condition.Reason != "SecretGenerated" {
		t.Errorf("condition reason %s, want SecretGenerated", res.Condition.Reason)
	}
	if b, _ := json.Marshal(res); bytes.Contains(b, []byte(pw)) {
		t.Error("the hook's result (values, status, condition) holds the password")
	}
	if got := res.Values["credentials"].(map[string]any)["secretName"]; got != "orders-credentials" {
		t.Errorf("values credentials.secretName = %v", got)
	}

	// Again, and after a spec edit: the Secret is not touched.
	db.Object["spec"].(map[string]any)["storageSize"] = "5Gi"
	for i := 0; i < 2; i++ {
		if _, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any)); err != nil {
			t.Fatal(err)
		}
	}
	if again := secret(t, ns, "orders-credentials"); again.ResourceVersion != s.ResourceVersion {
		t.Error("the generated Secret was modified by a later reconcile")
	}
}

func TestHook_UsesTheUsersSecretAsIs(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	h := &Hook{Client: k8s, Reader: k8s}
	mine := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"},
		Data:       map[string][]byte{"user": []byte("bob"), "pass": []byte("hunter2-hunter2")},
	}
	if err := k8s.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		creds   map[string]any
		wantErr string
	}{
		{name: "keys named in the spec", creds: map[string]any{"secretName": "mine", "usernameKey": "user", "passwordKey": "pass"}},
		{name: "a key the Secret lacks", creds: map[string]any{"secretName": "mine", "usernameKey": "user"},
			wantErr: `credentials Secret "mine" has no key "password": add it, or set spec.credentials to the keys it has`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := database(ns, "users", map[string]any{"credentials": tt.creds})
			res, err := h.Reconcile(ctx, db, db.Object["spec"].(map[string]any))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || res.Condition.Reason != "SecretProvided" {
				t.Fatalf("err = %v, reason %s", err, res.Condition.Reason)
			}
			if s := secret(t, ns, "mine"); s.ResourceVersion != mine.ResourceVersion {
				t.Error("the user's Secret was modified")
			}
		})
	}
}

func TestHook_Finalize(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		policy     string
		usersOwn   bool
		ownFor     string // the user's Secret carries GeneratedAnnotation naming this
		wantExists bool
	}{
		{name: "default policy keeps the generated Secret", wantExists: true},
		{name: "Retain keeps it", policy: "Retain", wantExists: true},
		{name: "Delete deletes the generated Secret", policy: "Delete", wantExists: false},
		{name: "Delete keeps the user's own Secret", policy: "Delete", usersOwn: true, wantExists: true},
		{name: "Delete keeps a Secret generated for another Database", policy: "Delete", usersOwn: true,
			ownFor: "Database/other", wantExists: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := namespace(t)
			h := &Hook{Client: k8s, Reader: k8s}
			spec := map[string]any{}
			if tt.policy != "" {
				spec["deletionPolicy"] = tt.policy
			}
			if tt.usersOwn {
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-credentials"},
					Data: map[string][]byte{"username": []byte("u"), "password": []byte("p")}}
				if tt.ownFor != "" {
					s.Annotations = map[string]string{GeneratedAnnotation: tt.ownFor}
				}
				if err := k8s.Create(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			db := database(ns, "db", spec)
			res, err := h.Reconcile(ctx, db, spec)
			if err != nil {
				t.Fatal(err)
			}
			if tt.usersOwn && res.Condition.Reason != "SecretProvided" {
				t.Errorf("condition %+v for a Secret not generated for this Database, want SecretProvided", res.Condition)
			}
			if err := h.Finalize(ctx, db); err != nil {
				t.Fatal(err)
			}
			err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-credentials"}, &corev1.Secret{})
			if exists := !apierrors.IsNotFound(err); exists != tt.wantExists {
				t.Errorf("Secret exists = %v, want %v (err %v)", exists, tt.wantExists, err)
			}
		})
	}
}
