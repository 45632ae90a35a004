//go:build unix

package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func init() {
	// stubborn ignores SIGTERM and stdin, says "ready" and sleeps.
	helpers["stubborn"] = func() {
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		sleepForever()
	}
	// grandchild starts a grandchild that sleeps in its process group,
	// sharing its stdout and stderr, prints the grandchild's pid and then
	// does what STDIO_TEST_MODE says: exit at once, exit at the end of
	// stdin, or ignore SIGTERM and stdin and sleep.
	helpers["grandchild"] = func() {
		mode := os.Getenv("STDIO_TEST_MODE")
		if mode == "stubborn" {
			signal.Ignore(syscall.SIGTERM)
		}
		fmt.Println(startGrandchild(nil))
		switch mode {
		case "exit":
		case "stdin":
			io.Copy(io.Discard, os.Stdin)
		default:
			sleepForever()
		}
	}
	// escape starts a grandchild in a session of its own, out of reach of
	// the group kill, sharing its stdout and stderr; prints its pid; exits.
	// watchdog is the watchdog process.
	helpers["watchdog"] = func() { RunWatchdog(os.Stdin) }
	helpers["escape"] = func() {
		fmt.Println(startGrandchild(&syscall.SysProcAttr{Setsid: true}))
	}
}

// startGrandchild starts the sleep helper with our stdout and stderr and
// returns its pid.
func startGrandchild(attr *syscall.SysProcAttr) int {
	cmd := exec.Command(testExe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=sleep")
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return cmd.Process.Pid
}

// gone reports whether process pid has ended. A zombie counts as ended: an
// orphan is reaped by init, which may take its time (or, in a container,
// never come to it).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')') // the state follows the command name
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// readLine reads the first line of r within the watchdog.
func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var line string
	var err error
	do(t, "reading a line", func() { line, err = r.ReadString('\n') })
	if err != nil {
		t.Fatalf("reading a line: %q, %v", line, err)
	}
	return strings.TrimSuffix(line, "\n")
}

func readPid(t *testing.T, r *bufio.Reader) int {
	t.Helper()
	line := readLine(t, r)
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("want a pid, got %q", line)
	}
	return pid
}

func checkRunning(t *testing.T, pid int) {
	t.Helper()
	if gone(pid) {
		t.Fatalf("grandchild %d is not running", pid)
	}
}

// stopTimed stops p, checks the status it ended with and how many grace
// periods it took at least.
func stopTimed(t *testing.T, p *Process, grace time.Duration, steps int, status string) {
	t.Helper()
	begin := time.Now()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	d := time.Since(begin)
	if min := time.Duration(steps) * grace; d < min {
		t.Errorf("Stop took %v, less than %d grace periods", d, steps)
	}
	if d > time.Duration(steps+1)*grace+2*time.Second {
		t.Errorf("Stop took %v", d)
	}
	if status == "" {
		if err := p.Err(); err != nil {
			t.Errorf("Err() = %v, want nil", err)
		}
	} else if ee := exitError(t, p.Err()); ee.Status != status {
		t.Errorf("Status = %q, want %q", ee.Status, status)
	}
}

func TestStopTerm(t *testing.T) {
	t.Parallel()
	spec := helperSpec("sleep")
	spec.StopGrace = 100 * time.Millisecond
	p := start(t, spec)
	stopTimed(t, p, spec.StopGrace, 1, "signal: terminated")
}

// startStubborn starts the stubborn helper, which only SIGKILL ends, with
// grace as its StopGrace, and waits until it is ready.
func startStubborn(t *testing.T, grace time.Duration) *Process {
	t.Helper()
	spec := helperSpec("stubborn")
	spec.StopGrace = grace
	p := start(t, spec)
	if line := readLine(t, bufio.NewReader(p.Stdout())); line != "ready" {
		t.Fatalf("got %q, want ready", line)
	}
	return p
}

func TestStopKill(t *testing.T) {
	t.Parallel()
	const grace = 100 * time.Millisecond
	stopTimed(t, startStubborn(t, grace), grace, 2, "signal: killed")
}

func TestStopKillsGroup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode   string
		steps  int
		status string
	}{
		{"stdin", 0, ""}, // the child exits at the end of stdin, its grandchild is killed
		{"stubborn", 2, "signal: killed"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			spec := helperSpec("grandchild", "STDIO_TEST_MODE="+tc.mode)
			spec.StopGrace = 100 * time.Millisecond
			if tc.steps == 0 {
				spec.StopGrace = watchdog
			}
			p := start(t, spec)
			out := bufio.NewReader(p.Stdout())
			gpid := readPid(t, out)
			t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
			checkRunning(t, gpid)
			stopTimed(t, p, spec.StopGrace, tc.steps, tc.status)
			waitFor(t, "the grandchild to end", func() bool { return gone(gpid) })
			if _, err := readAll(t, out); err != nil {
				t.Errorf("stdout: %v, want EOF", err)
			}
		})
	}
}

func TestExitKillsGroup(t *testing.T) {
	t.Parallel()
	p := start(t, helperSpec("grandchild", "STDIO_TEST_MODE=exit"))
	out := bufio.NewReader(p.Stdout())
	gpid := readPid(t, out)
	t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
	// The grandchild holds stdout open: the end of file comes only because
	// the group was killed when the child exited.
	if _, err := readAll(t, out); err != nil {
		t.Errorf("stdout: %v, want EOF", err)
	}
	waitDone(t, p)
	waitFor(t, "the grandchild to end", func() bool { return gone(gpid) })
	if ee := exitError(t, p.Err()); ee.Status != "exit status 0" {
		t.Errorf("Status = %q", ee.Status)
	}
}

// A process that escaped the group and holds the pipes cannot hang the
// reader or Done.
func TestEscapedHolder(t *testing.T) {
	t.Parallel()
	spec := helperSpec("escape")
	spec.StopGrace = 200 * time.Millisecond
	p := start(t, spec)
	out := bufio.NewReader(p.Stdout())
	gpid := readPid(t, out)
	t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
	checkRunning(t, gpid)
	if _, err := readAll(t, out); !errors.Is(err, ErrLeftOpen) {
		t.Errorf("stdout: %v, want ErrLeftOpen", err)
	}
	waitDone(t, p)
	if gone(gpid) {
		t.Error("the escaped grandchild was killed; is the test still testing?")
	}
}

// Terminate does not wait politely: a child that ignores its stdin and
// SIGTERM is killed TerminateGrace after the call, however long StopGrace.
func TestTerminateStubborn(t *testing.T) {
	t.Parallel()
	p := startStubborn(t, watchdog)
	begin := time.Now()
	if err := p.Terminate(); err != nil {
		t.Fatal(err)
	}
	d := time.Since(begin)
	t.Logf("Terminate took %v", d)
	if d < TerminateGrace || d >= watchdog {
		t.Errorf("Terminate took %v, want TerminateGrace (%v) and less than StopGrace (%v)", d, TerminateGrace, watchdog)
	}
	if ee := exitError(t, p.Err()); ee.Status != "signal: killed" {
		t.Errorf("Status = %q, want signal: killed", ee.Status)
	}
}

// Terminate hurries a Stop that is waiting politely: both return long
// before StopGrace.
func TestTerminateHurriesStop(t *testing.T) {
	t.Parallel()
	p := startStubborn(t, watchdog)
	begin := time.Now()
	stopped := make(chan error, 1)
	go func() { stopped <- p.Stop() }()
	// Terminate only once the polite Stop has closed the child's stdin.
	do(t, "waiting for Stop to close stdin", func() {
		for {
			if _, err := p.Stdin().Write([]byte("\n")); err != nil {
				return
			}
			runtime.Gosched()
		}
	})
	if err := p.Terminate(); err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d >= watchdog {
		t.Errorf("Stop hurried by Terminate took %v, want less than StopGrace (%v)", d, watchdog)
	}
	if ee := exitError(t, p.Err()); ee.Status != "signal: killed" {
		t.Errorf("Status = %q, want signal: killed", ee.Status)
	}
}

// The watchdog kills each child's whole group when its pipe closes without
// the children having been stopped, as when the aggregator is killed.
func TestWatchdogKillsGroupsWhenItsOwnerDies(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(testExe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=watchdog", quickRaceExit)
	wd, err := StartWatchdog(cmd)
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	spec := helperSpec("grandchild", "STDIO_TEST_MODE=stubborn")
	spec.Watchdog = wd
	p := start(t, spec)
	grandchild := readPid(t, bufio.NewReader(p.Stdout()))
	ended := start(t, func() Spec { s := helperSpec("exit0"); s.Watchdog = wd; return s }())
	waitDone(t, ended)

	// The owner dies: the pipe closes with nothing released.
	wd.mu.Lock()
	wd.w.Close()
	wd.mu.Unlock()
	waitDone(t, p)
	do(t, "waiting for the watchdog to exit", func() {
		if err := <-exited; err != nil {
			t.Errorf("watchdog: %v", err)
		}
	})
	if ee := exitError(t, p.Err()); ee.Status != "signal: killed" {
		t.Errorf("child ended with %q, want signal: killed (it ignores SIGTERM)", ee.Status)
	}
	do(t, "waiting for the grandchild to be gone", func() {
		for !gone(grandchild) {
			runtime.Gosched()
		}
	})
}
