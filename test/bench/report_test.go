package bench

import (
	"strings"
	"testing"
)

func TestSpliceGenerated(t *testing.T) {
	m := markersOf("make bench")
	beginMarker, endMarker := m.begin, m.end
	generated := beginMarker + "\nNEW\n" + endMarker
	tests := []struct {
		name    string
		doc     string
		want    string
		wantErr bool
	}{
		{name: "replaces the section, keeping the text around it",
			doc:  "# Benchmarks\n\nBy hand.\n\n" + beginMarker + "\nOLD\n" + endMarker + "\n\nMore by hand.\n",
			want: "# Benchmarks\n\nBy hand.\n\n" + generated + "\n\nMore by hand.\n"},
		{name: "appends to a page without markers",
			doc:  "# Benchmarks\n\nBy hand.\n",
			want: "# Benchmarks\n\nBy hand.\n\n" + generated + "\n"},
		{name: "starts a missing page",
			doc:  "",
			want: strings.TrimRight(newDoc, "\n") + "\n\n" + generated + "\n"},
		{name: "refuses markers out of order", doc: endMarker + "\n" + beginMarker + "\n", wantErr: true},
		{name: "refuses a lone end marker", doc: "x\n" + endMarker + "\n", wantErr: true},
		{name: "keeps another generator's section",
			doc:  beginMarker + "\nOLD\n" + endMarker + "\n\n" + markersOf("make bench-shards").begin + "\nS\n" + markersOf("make bench-shards").end + "\n",
			want: generated + "\n\n" + markersOf("make bench-shards").begin + "\nS\n" + markersOf("make bench-shards").end + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := spliceGenerated(tt.doc, m, "NEW\n")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestParseColumns(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "", want: "floor,baseline,rudder"},
		{in: "rudder", want: "rudder"},
		{in: "rudder, floor", want: "floor,rudder"},
		{in: "rudder,helm", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseColumns(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("got %v, want %s", got, tt.want)
			}
		})
	}
}
