package bench

import "testing"

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    float64
		wantErr bool
	}{
		{name: "plain command name",
			stat: "1234 (manager) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0",
			want: 3},
		{name: "command name with spaces and parentheses",
			stat: "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 12 0 100 0 0",
			want: 0.03},
		{name: "no command name", stat: "1234 manager S 1", wantErr: true},
		{name: "too short", stat: "1234 (manager) S 1 2 3", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tt.stat))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %v CPU-s, want %v", got, tt.want)
			}
		})
	}
}

func TestStatusBytes(t *testing.T) {
	const status = "Name:\tmanager\nVmPeak:\t 900000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t 40000 kB\nRssAnon:\t   20480 kB\nRssFile:\t   19520 kB\n"
	tests := []struct {
		name    string
		status  string
		field   string
		want    float64
		wantErr bool
	}{
		{name: "peak resident", status: status, field: "VmHWM", want: 50 << 20},
		{name: "anonymous resident", status: status, field: "RssAnon", want: 20 << 20},
		{name: "absent", status: "Name:\tmanager\n", field: "RssAnon", wantErr: true},
		{name: "malformed", status: "VmHWM:\t lots kB\n", field: "VmHWM", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := statusBytes([]byte(tt.status), tt.field)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("got %v bytes, want %v", got, tt.want)
			}
		})
	}
}
