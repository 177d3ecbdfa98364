package admission

import (
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		name, in string
		want     Mode
		wantErr  bool
	}{
		{name: "off", in: "off", want: Off},
		{name: "service", in: "service", want: Service},
		{name: "url", in: "url", want: URL},
		{name: "unknown", in: "on", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMode(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("ParseMode(%q) = %q, %v; want %q, error %t", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestTimeoutSeconds(t *testing.T) {
	tests := []struct {
		name   string
		budget time.Duration
		want   int32
	}{
		{name: "the default budget and the margin", budget: DefaultBudget, want: 5},
		{name: "a fraction of a second rounds up", budget: 1500 * time.Millisecond, want: 4},
		{name: "at most the API server's 30", budget: time.Minute, want: 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TimeoutSeconds(tt.budget); got != tt.want {
				t.Errorf("TimeoutSeconds(%s) = %d, want %d", tt.budget, got, tt.want)
			}
		})
	}
}
