package stdio

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

func init() {
	// jobtree starts a grandchild that sleeps, sharing its stdout and
	// stderr, prints the grandchild's pid and then exits at once
	// (STDIO_TEST_MODE=exit) or sleeps, ignoring stdin.
	helpers["jobtree"] = func() {
		cmd := exec.Command(testExe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"=sleep")
		cmd.Stdout = os.Stdout
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		if os.Getenv("STDIO_TEST_MODE") != "exit" {
			sleepForever()
		}
	}
}

// The struct as winnt.h declares it, in Go: on 64-bit Windows Go aligns
// every field as the C compiler does, so its layout is the reference.
type basicLimitInformation struct {
	PerProcessUserTimeLimit int64
	PerJobUserTimeLimit     int64
	LimitFlags              uint32
	MinimumWorkingSetSize   uintptr
	MaximumWorkingSetSize   uintptr
	ActiveProcessLimit      uint32
	Affinity                uintptr
	PriorityClass           uint32
	SchedulingClass         uint32
}

type extendedLimitInformation struct {
	BasicLimitInformation basicLimitInformation
	IoInfo                [6]uint64 // IO_COUNTERS
	ProcessMemoryLimit    uintptr
	JobMemoryLimit        uintptr
	PeakProcessMemoryUsed uintptr
	PeakJobMemoryUsed     uintptr
}

func TestExtendedLimitInfoLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ptrSize, size int }{{8, 144}, {4, 112}} {
		info := extendedLimitInfo(jobObjectLimitKillOnJobClose, tc.ptrSize)
		want := make([]byte, tc.size)
		want[17] = 0x20 // LimitFlags, at 16, little-endian 0x2000
		if !bytes.Equal(info, want) {
			t.Errorf("%d-byte pointers: got % x, want % x", tc.ptrSize, info, want)
		}
	}
	if unsafe.Sizeof(uintptr(0)) == 8 {
		var ref extendedLimitInformation
		l := extendedLimitLayout(8)
		if l.size != int(unsafe.Sizeof(ref)) || l.limitFlags != int(unsafe.Offsetof(ref.BasicLimitInformation.LimitFlags)) {
			t.Errorf("layout %+v, the Go struct has size %d, LimitFlags at %d",
				l, unsafe.Sizeof(ref), unsafe.Offsetof(ref.BasicLimitInformation.LimitFlags))
		}
	}
	if extendedLimitInfoMax != extendedLimitLayout(8).size {
		t.Errorf("extendedLimitInfoMax = %d, want %d", extendedLimitInfoMax, extendedLimitLayout(8).size)
	}
}

// processGone reports whether process pid has ended.
func processGone(pid int) bool {
	h, err := syscall.OpenProcess(syscall.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return true // ERROR_INVALID_PARAMETER: no such process
	}
	defer syscall.CloseHandle(h)
	ev, err := syscall.WaitForSingleObject(h, 0)
	return err == nil && ev == syscall.WAIT_OBJECT_0
}

// startJobTree starts the jobtree helper and returns it, a reader of its
// stdout and its grandchild's pid.
func startJobTree(t *testing.T, mode string) (*Process, *bufio.Reader, int) {
	t.Helper()
	spec := helperSpec("jobtree", "STDIO_TEST_MODE="+mode)
	spec.StopGrace = 100 * time.Millisecond
	p := start(t, spec)
	if _, ok := jobOf(p.cmd.Process, false); !ok {
		t.Fatal("the child has no job")
	}
	out := bufio.NewReader(p.Stdout())
	var line string
	var err error
	do(t, "reading the grandchild's pid", func() { line, err = out.ReadString('\n') })
	gpid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("want a pid, got %q, %v", line, err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return // the grandchild is gone; its pid may be another's now
		}
		if p, err := os.FindProcess(gpid); err == nil {
			p.Kill()
			p.Release()
		}
	})
	return p, out, gpid
}

// Stop terminates the child's whole tree, not the child alone.
func TestStopKillsJob(t *testing.T) {
	t.Parallel()
	p, out, gpid := startJobTree(t, "sleep")
	if processGone(gpid) {
		t.Fatalf("grandchild %d is not running", gpid)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the grandchild to end", func() bool { return processGone(gpid) })
	if _, err := readAll(t, out); err != nil {
		t.Errorf("stdout: %v, want EOF", err)
	}
	if _, ok := jobOf(p.cmd.Process, false); ok {
		t.Error("the job is still recorded after the child ended")
	}
}

// A child that exits leaves no process behind: what it started is killed
// with its job, and so the end of its stdout comes.
func TestExitKillsJob(t *testing.T) {
	t.Parallel()
	p, out, gpid := startJobTree(t, "exit")
	if _, err := readAll(t, out); err != nil {
		t.Errorf("stdout: %v, want EOF", err)
	}
	waitDone(t, p)
	waitFor(t, "the grandchild to end", func() bool { return processGone(gpid) })
	if _, ok := jobOf(p.cmd.Process, false); ok {
		t.Error("the job is still recorded after the child ended")
	}
}

// A process with no job of ours is terminated alone.
func TestSignalGroupWithoutJob(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(testExe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=sleep")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := signalGroup(cmd.Process, false); err != nil {
		t.Fatal(err)
	}
	do(t, "waiting for the terminated child", func() { cmd.Wait() })
	if cmd.ProcessState.ExitCode() != jobExitCode {
		t.Errorf("exit code %d, want %d", cmd.ProcessState.ExitCode(), jobExitCode)
	}
	if err := signalGroup(cmd.Process, true); err != nil {
		t.Errorf("after the exit: %v, want nil", err)
	}
}
