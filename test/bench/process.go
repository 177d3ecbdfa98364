package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of utime and stime in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const userHZ = 100

// process is a measured subprocess: an operator or a floor applier.
type process struct {
	cmd *exec.Cmd
	// logPath holds stdout and stderr when set; otherwise they are kept in
	// stdout and stderr.
	logPath        string
	stdout, stderr bytes.Buffer

	exited  chan struct{} // closed once the process has exited
	waitErr error         // cmd.Wait's result, set before exited is closed
}

// startProcess starts bin with args and extra environment. The process gets
// SIGTERM when the test binary dies, so it never outlives a killed run.
func startProcess(bin string, args, env []string, logPath string) (*process, error) {
	p := &process{logPath: logPath, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	var logFile *os.File
	if logPath != "" {
		var err error
		if logFile, err = os.Create(logPath); err != nil {
			return nil, err
		}
		p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	} else {
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	}
	// The parent-death signal fires when the thread that started the process
	// exits, so that thread stays locked to this goroutine while it lives.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := p.cmd.Start(); err != nil {
			started <- err
			runtime.UnlockOSThread()
			return
		}
		started <- nil
		p.waitErr = p.cmd.Wait()
		if logFile != nil {
			_ = logFile.Close()
		}
		close(p.exited)
	}()
	if err := <-started; err != nil {
		if logFile != nil {
			_ = logFile.Close()
		}
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// running says whether the process has not exited yet.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits up to timeout for the process to exit, then
// kills it. It returns an error unless the process exited with code 0.
func (p *process) stop(timeout time.Duration) error {
	if !p.running() {
		return fmt.Errorf("it had exited already: %w", p.waitErr)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("sending SIGTERM: %w", err)
	}
	select {
	case <-p.exited:
		return p.waitErr
	case <-time.After(timeout):
		p.kill()
		return fmt.Errorf("still running %s after SIGTERM; killed", timeout)
	}
}

// kill kills the process and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// cpu returns the CPU-seconds (user and system) the running process has used.
func (p *process) cpu() (float64, error) { return pidCPU(p.pid()) }

// pidCPU returns the CPU-seconds (user and system) process pid has used.
func pidCPU(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(stat)
}

// parseStatCPU reads utime and stime from the text of /proc/PID/stat.
func parseStatCPU(stat []byte) (float64, error) {
	// The command name is in parentheses and may hold spaces; utime and
	// stime are the 14th and 15th fields, the 12th and 13th after it.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc/PID/stat")
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 13 {
		return 0, errors.New("short /proc/PID/stat")
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("reading /proc/PID/stat: %w", err)
	}
	return (utime + stime) / userHZ, nil
}

// memory returns the running process's peak resident memory (VmHWM) and
// its anonymous resident memory now (RssAnon), in bytes. The kernel keeps no
// high-water mark of RssAnon: its peak is the most of what is sampled.
func (p *process) memory() (peakRSS, anon float64, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, 0, err
	}
	if peakRSS, err = statusBytes(status, "VmHWM"); err != nil {
		return 0, 0, err
	}
	anon, err = statusBytes(status, "RssAnon")
	return peakRSS, anon, err
}

// statusBytes reads field (VmRSS, VmHWM, …) from the text of
// /proc/PID/status, in bytes.
func statusBytes(status []byte, field string) (float64, error) {
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return 0, fmt.Errorf("reading %s: %w", field, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no %s in /proc/PID/status", field)
}

// exitCPU is the CPU-seconds an exited process used, from its rusage.
func (p *process) exitCPU() float64 {
	if p.cmd.ProcessState == nil {
		return 0
	}
	return p.cmd.ProcessState.UserTime().Seconds() + p.cmd.ProcessState.SystemTime().Seconds()
}

// exitMaxRSS is an exited process's peak resident memory in bytes.
func (p *process) exitMaxRSS() float64 {
	if p.cmd.ProcessState == nil {
		return 0
	}
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) * 1024 // kB on Linux
	}
	return 0
}

// tail is the end of the process's output, to explain a failure.
func (p *process) tail() string {
	const keep = 4096
	var out []byte
	if p.logPath != "" {
		out, _ = os.ReadFile(p.logPath)
	} else {
		out = append(p.stdout.Bytes(), p.stderr.Bytes()...)
	}
	if len(out) > keep {
		out = out[len(out)-keep:]
	}
	return string(out)
}
