package watches

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxReleaseNameLen is Helm's limit on the length of a release name (chartutil.ValidateReleaseName).
const maxReleaseNameLen = 53

// ReleaseName returns the name of the Helm release of the custom resource crName of this kind:
// "<lower-case kind>-<crName>", such as "webapp-shop".
//
// The kind prefix is there because releases are named per namespace: without it, a WebApp "shop" and a
// Database "shop" in one namespace would share a release, and each reconcile would upgrade or uninstall the
// other's objects. Load rejects two kinds differing only in group or letter case for the same reason.
// operator-sdk names a release after the custom resource alone, so rudder does not adopt its releases.
//
// Helm allows 53 characters. A longer name is cut to fit and ends in "-" and 8 hex digits of the SHA-256 of
// the whole name, so that it stays stable across reconciles and distinct from other cut names. crName must be
// a valid object name (a DNS-1123 subdomain), as the API server ensures; the result is then a valid release name.
func (w Watch) ReleaseName(crName string) string {
	full := strings.ToLower(w.GVK.Kind) + "-" + crName
	if len(full) <= maxReleaseNameLen {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	suffix := "-" + hex.EncodeToString(sum[:4])
	// Helm wants a letter or digit before the suffix's dash, and after any dot.
	return strings.TrimRight(full[:maxReleaseNameLen-len(suffix)], "-.") + suffix
}
