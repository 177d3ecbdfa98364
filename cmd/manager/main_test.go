package main

import (
	"slices"
	"testing"
)

func TestNamespaces(t *testing.T) {
	tests := map[string][]string{
		"":                nil,
		"shop":            {"shop"},
		"shop,billing":    {"shop", "billing"},
		"shop, ,billing,": {"shop", "billing"},
		"\tshop":          {"shop"},
	}
	for env, want := range tests {
		if got := namespaces(env); !slices.Equal(got, want) {
			t.Errorf("namespaces(%q) = %q, want %q", env, got, want)
		}
	}
}
