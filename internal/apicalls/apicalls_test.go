package apicalls

import (
	"net/http"
	"testing"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct{ method, url, verb, resource string }{
		{"GET", "/api/v1/namespaces/a/secrets/sh.helm.release.v1.x.v1", "get", "secrets"},
		{"GET", "/api/v1/namespaces/a/secrets?labelSelector=owner%3Dhelm", "list", "secrets"},
		{"GET", "/apis/apps/v1/deployments?watch=true&resourceVersion=5", "watch", "deployments"},
		{"PATCH", "/apis/apps/v1/namespaces/a/deployments/web?fieldManager=rudder&dryRun=All", "patch-dryrun", "deployments"},
		{"PUT", "/apis/example.com/v1/namespaces/a/webapps/w/status", "update", "webapps/status"},
		{"POST", "/api/v1/namespaces/a/events", "create", "events"},
		{"POST", "/apis/events.k8s.io/v1/namespaces/a/events", "create", "events"},
		{"GET", "/api/v1/namespaces/a", "get", "namespaces"},
		{"GET", "/api/v1/namespaces", "list", "namespaces"},
		{"DELETE", "/api/v1/namespaces/a/pods", "deletecollection", "pods"},
		{"POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "create", "selfsubjectaccessreviews"},
		{"GET", "/apis/apps/v1", "get", "/apis/apps/v1"},
		{"GET", "/version", "get", "/version"},
	} {
		req, err := http.NewRequest(tc.method, "https://127.0.0.1:6443"+tc.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		verb, resource := Describe(req)
		if verb != tc.verb || resource != tc.resource {
			t.Errorf("%s %s: got %s %s, want %s %s", tc.method, tc.url, verb, resource, tc.verb, tc.resource)
		}
	}
}
