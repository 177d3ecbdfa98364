package backup

import (
	"testing"
	"time"
)

func TestDumpName(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		t      time.Time
		want   string
	}{
		{name: "UTC", prefix: "shop", t: time.Date(2026, 3, 4, 5, 6, 7, 999, time.UTC), want: "shop-20260304T050607Z.dump"},
		{name: "other zone in UTC", prefix: "shop", t: time.Date(2026, 1, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600)), want: "shop-20260101T000000Z.dump"},
		{name: "prefix with dash and dot", prefix: "shop-eu.v2", t: time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC), want: "shop-eu.v2-19991231T235959Z.dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DumpName(tt.prefix, tt.t)
			if got != tt.want {
				t.Fatalf("DumpName = %q, want %q", got, tt.want)
			}
			back, ok := ParseDumpTime(tt.prefix, got)
			if !ok || !back.Equal(tt.t.Truncate(time.Second)) {
				t.Errorf("ParseDumpTime(%q) = %s, %v; want %s, true", got, back, ok, tt.t.Truncate(time.Second))
			}
		})
	}
}

func TestParseDumpTime(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		file   string
		want   time.Time // zero: not a dump of prefix
	}{
		{name: "dump", prefix: "shop", file: "shop-20260304T050607Z.dump", want: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)},
		{name: "another prefix's, starting with this one", prefix: "shop", file: "shop-eu-20260304T050607Z.dump"},
		{name: "this prefix's, seen from a shorter one", prefix: "sho", file: "shop-20260304T050607Z.dump"},
		{name: "partial", prefix: "shop", file: ".shop-20260304T050607Z.dump.partial"},
		{name: "other extension", prefix: "shop", file: "shop-20260304T050607Z.dump.bak"},
		{name: "no timestamp", prefix: "shop", file: "shop-latest.dump"},
		{name: "lowercase t", prefix: "shop", file: "shop-20260304t050607Z.dump"},
		{name: "seconds missing", prefix: "shop", file: "shop-20260304T0506Z.dump"},
		{name: "fraction", prefix: "shop", file: "shop-20260304T050607.5Z.dump"},
		{name: "month 13", prefix: "shop", file: "shop-20261304T050607Z.dump"},
		{name: "in a directory", prefix: "shop", file: "/backups/shop-20260304T050607Z.dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseDumpTime(tt.prefix, tt.file)
			if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
				t.Errorf("ParseDumpTime(%q, %q) = %s, %v; want %s, %v", tt.prefix, tt.file, got, ok, tt.want, !tt.want.IsZero())
			}
		})
	}
}
