package values

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rudder-operator/rudder/internal/helm"
)

// DigestLength is the number of hex characters of a digest: short enough for
// a label value (at most 63), long enough (128 bits) never to collide.
const DigestLength = 32

// For returns the effective values of obj: a deep copy of its .spec with each
// override ("a.b.c" → value, operator-sdk's overrideValues) applied on top.
// A resource without a spec gets empty values.
func For(obj *unstructured.Unstructured, overrides map[string]string) (map[string]any, error) {
	vals := map[string]any{}
	if spec, ok := obj.Object["spec"].(map[string]any); ok {
		vals = runtime.DeepCopyJSON(spec)
	}
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := helm.ParseSet(k+"="+overrides[k], vals); err != nil {
			return nil, fmt.Errorf("override value %q: %w", k, err)
		}
	}
	return vals, nil
}

// Digest returns a stable digest of vals: equal values give equal digests
// whatever the order their keys were written in.
func Digest(vals map[string]any) string {
	if vals == nil {
		vals = map[string]any{} // no values and empty values are the same release
	}
	// encoding/json writes map keys sorted, so the encoding is canonical.
	b, err := json.Marshal(vals)
	if err != nil {
		// Values come from JSON (a custom resource), so they always encode.
		panic(fmt.Sprintf("values: cannot encode values: %v", err))
	}
	return Sum(b)
}

// Sum returns the truncated hex SHA-256 of b.
func Sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])[:DigestLength]
}
