package bench

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    cpuTimes
		wantErr bool
	}{
		{name: "idle and iowait are not busy",
			stat: "cpu  100 5 30 800 40 2 3 10 0 0\ncpu0 50 2 15 400 20 1 1 5 0 0\n",
			want: cpuTimes{busy: 150, total: 990}},
		{name: "not the cpu line", stat: "intr 1 2 3 4 5 6 7 8 9\n", wantErr: true},
		{name: "too short", stat: "cpu 1 2 3\n", wantErr: true},
		{name: "not a number", stat: "cpu 1 2 x 4 5 6 7 8\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tt.stat))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBusyShare(t *testing.T) {
	if got := busyShare(cpuTimes{busy: 100, total: 400}, cpuTimes{busy: 250, total: 600}); got != 0.75 {
		t.Errorf("busy share = %v, want 0.75", got)
	}
	if got := busyShare(cpuTimes{busy: 1, total: 2}, cpuTimes{busy: 1, total: 2}); !math.IsNaN(got) {
		t.Errorf("busy share with no time passed = %v, want NaN", got)
	}
}

func TestRecordedPid(t *testing.T) {
	dir := t.TempDir()
	self, err := os.ReadFile("/proc/self/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	argv0, _, _ := strings.Cut(string(self), "\x00")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := write("own.pid", strconv.Itoa(os.Getpid())+"\n")
	if pid, err := recordedPid(own, argv0); err != nil || pid != os.Getpid() {
		t.Errorf("recordedPid of this process = %d, %v; want %d", pid, err, os.Getpid())
	}
	if _, err := recordedPid(own, "/not/this/binary"); err == nil {
		t.Error("a pid that runs another binary was taken")
	}
	if _, err := recordedPid(write("garbage.pid", "abc"), argv0); err == nil {
		t.Error("a pid file without a number was taken")
	}
	if _, err := recordedPid(filepath.Join(dir, "missing.pid"), argv0); err == nil {
		t.Error("a missing pid file was taken")
	}
}

func TestControlPlaneCPU(t *testing.T) {
	if got, parts := (&controlPlane{}).cpuSince(nil); !math.IsNaN(got) || parts != "" {
		t.Errorf("CPU of an unknown control plane = %v (%q), want NaN", got, parts)
	}
	cp := &controlPlane{names: []string{"a", "b"}, pids: []int{os.Getpid(), os.Getpid()}}
	before := cp.cpu()
	if len(before) != 2 || before[0] <= 0 {
		t.Fatalf("CPU of two processes = %v", before)
	}
	// Use CPU until the kernel has counted some (a tick is 10 ms).
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		if now, err := pidCPU(os.Getpid()); err != nil || now > before[0] {
			break
		}
	}
	got, parts := cp.cpuSince(before)
	if got <= 0 || !strings.HasPrefix(parts, "a ") || !strings.Contains(parts, ", b ") {
		t.Errorf("CPU since = %v (%q), want more than 0 for a and b", got, parts)
	}
	if got, _ := cp.cpuSince([]float64{1}); !math.IsNaN(got) {
		t.Errorf("CPU since a reading of another control plane = %v, want NaN", got)
	}
}
