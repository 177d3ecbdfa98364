package bench

import (
	"strings"
	"testing"
)

const sampleMetrics = `# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:16443",method="GET"} 120
rest_client_requests_total{code="404",host="127.0.0.1:16443",method="GET"} 3
rest_client_requests_total{code="201",host="127.0.0.1:16443",method="POST"} 40
rest_client_requests_total{code="200",host="127.0.0.1:16443",method="PATCH"} 7
# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{controller="webapp",name="webapp"} 2
workqueue_depth{controller="network",name="network"} 1
# HELP go_memstats_heap_inuse_bytes Number of heap bytes that are in use.
# TYPE go_memstats_heap_inuse_bytes gauge
go_memstats_heap_inuse_bytes 3.2e+07
# HELP go_memstats_heap_alloc_bytes Number of heap bytes allocated and still in use.
# TYPE go_memstats_heap_alloc_bytes gauge
go_memstats_heap_alloc_bytes 2.5e+07
`

func TestScrape_Readings(t *testing.T) {
	s, err := parseScrape(strings.NewReader(sampleMetrics))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"GET requests of every status code", s.requests()["GET"], 123},
		{"POST requests", s.requests()["POST"], 40},
		{"a verb never used", s.requests()["DELETE"], 0},
		{"queue depth over every controller", s.sum(metricQueueDepth), 3},
		{"heap prefers the in-use figure", s.heapBytes(), 3.2e7},
		{"an absent metric sums to 0", s.sum(metricReleaseDecodes), 0},
		{"writes", s.requests().total(writeVerbs...), 47},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	if s.has(metricReleaseDecodes) {
		t.Errorf("has(%s) = true for an endpoint without it", metricReleaseDecodes)
	}
}

func TestScrape_HeapBytesFallsBackToAlloc(t *testing.T) {
	s, err := parseScrape(strings.NewReader("# TYPE go_memstats_heap_alloc_bytes gauge\ngo_memstats_heap_alloc_bytes 42\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.heapBytes(); got != 42 {
		t.Errorf("heapBytes() = %v, want 42", got)
	}
}

func TestParseScrape_RejectsGarbage(t *testing.T) {
	if _, err := parseScrape(strings.NewReader("this is { not metrics\n")); err == nil {
		t.Error("parseScrape accepted text that is not the exposition format")
	}
}

func TestCounts_Arithmetic(t *testing.T) {
	a := counts{"GET": 10, "PATCH": 2}
	b := counts{"GET": 4, "POST": 1}
	tests := []struct {
		name string
		got  counts
		want counts
	}{
		{"add", a.add(b), counts{"GET": 14, "PATCH": 2, "POST": 1}},
		{"sub", a.sub(b), counts{"GET": 6, "PATCH": 2, "POST": -1}},
		{"add to nil", counts(nil).add(b), counts{"GET": 4, "POST": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.got) != len(tt.want) {
				t.Fatalf("got %v, want %v", tt.got, tt.want)
			}
			for k, v := range tt.want {
				if tt.got[k] != v {
					t.Errorf("got %v, want %v", tt.got, tt.want)
				}
			}
		})
	}
	if a["GET"] != 10 {
		t.Errorf("add or sub changed its receiver: %v", a)
	}
}
