package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// controlPlaneComponents are the local cluster's processes, whose pids
// hack/cluster-up.sh records in bin/cluster/pids/NAME.pid.
var controlPlaneComponents = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// controlPlane is the local cluster's processes, when the bench runs on it:
// the CPU they use in a scenario is the work a column gave the control plane,
// on the same cores as the column's own.
type controlPlane struct {
	names []string // the components, in controlPlaneComponents' order
	pids  []int
}

// findControlPlane returns the processes of the local cluster under root
// when KUBECONFIG is that cluster's; none (every figure NaN) for any other
// cluster, whose processes the bench cannot see.
func findControlPlane(root string) *controlPlane {
	cp := &controlPlane{}
	cluster := filepath.Join(root, "bin", "cluster")
	if filepath.Clean(os.Getenv("KUBECONFIG")) != filepath.Join(cluster, "kubeconfig") {
		return cp
	}
	for _, name := range controlPlaneComponents {
		pid, err := recordedPid(filepath.Join(cluster, "pids", name+".pid"), filepath.Join(root, "bin", name))
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: no control-plane CPU figures: %v\n", err)
			return &controlPlane{}
		}
		cp.names, cp.pids = append(cp.names, name), append(cp.pids, pid)
	}
	return cp
}

// recordedPid reads the pid in file and checks that it still runs bin (a
// recycled pid must not count).
func recordedPid(file, bin string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", file, err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return 0, fmt.Errorf("%s: pid %d: %w", file, pid, err)
	}
	if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); argv0 != bin {
		return 0, fmt.Errorf("%s: pid %d runs %q, not %s", file, pid, argv0, bin)
	}
	return pid, nil
}

// cpu returns the CPU-seconds each of the control plane's processes has
// used, in the order of cp.names; nil when they are unknown or one of them
// has gone.
func (cp *controlPlane) cpu() []float64 {
	if len(cp.pids) == 0 {
		return nil
	}
	out := make([]float64, len(cp.pids))
	for i, pid := range cp.pids {
		s, err := pidCPU(pid)
		if err != nil {
			return nil
		}
		out[i] = s
	}
	return out
}

// cpuSince returns the CPU-seconds the control plane used since before (a
// result of cpu), in all and per component ("kube-apiserver 61.2, etcd
// 20.1, …"); NaN and "" when either reading is missing.
func (cp *controlPlane) cpuSince(before []float64) (float64, string) {
	after := cp.cpu()
	if before == nil || len(after) != len(before) {
		return math.NaN(), ""
	}
	total, parts := 0.0, make([]string, len(after))
	for i := range after {
		d := after[i] - before[i]
		total += d
		parts[i] = fmt.Sprintf("%s %.1f", cp.names[i], d)
	}
	return total, strings.Join(parts, ", ")
}

// cpuTimes is the machine's CPU time from /proc/stat, in clock ticks summed
// over all cores: busy is everything but idle and iowait.
type cpuTimes struct{ busy, total float64 }

// machineCPU reads the machine's CPU times.
func machineCPU() (cpuTimes, error) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	return parseProcStat(stat)
}

// parseProcStat reads the first line of /proc/stat: "cpu user nice system
// idle iowait irq softirq steal …".
func parseProcStat(stat []byte) (cpuTimes, error) {
	line, _, _ := strings.Cut(string(stat), "\n")
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return cpuTimes{}, errors.New("malformed /proc/stat")
	}
	var t cpuTimes
	for i, f := range fields[1:9] {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("reading /proc/stat: %w", err)
		}
		t.total += v
		if i != 3 && i != 4 { // idle, iowait
			t.busy += v
		}
	}
	return t, nil
}

// busyShare is the share of the machine's CPU time that was busy between a
// and b, from 0 to 1; NaN when no time passed.
func busyShare(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return math.NaN()
	}
	return (b.busy - a.busy) / (b.total - a.total)
}
