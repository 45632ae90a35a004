package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests start real processes: the test binary itself, run with
// STDIO_TEST_HELPER set to the name of one of the helpers below, which
// TestMain then runs instead of the tests.

const helperEnv = "STDIO_TEST_HELPER"

// helpers are the behaviours of a child; unix_test.go and linux_test.go add
// their own.
var helpers = map[string]func(){
	// echo copies stdin to stdout line by line and exits at its end.
	"echo": func() {
		r := bufio.NewReader(os.Stdin)
		for {
			line, err := r.ReadBytes('\n')
			os.Stdout.Write(line)
			if err != nil {
				return
			}
		}
	},
	// env prints STDIO_TEST_VAR and its working directory.
	"env": func() {
		wd, _ := os.Getwd()
		fmt.Printf("%s\n%s\n", os.Getenv("STDIO_TEST_VAR"), wd)
	},
	// exit3 writes 12 stderr lines and exits with status 3.
	"exit3": func() {
		for i := 1; i <= 12; i++ {
			fmt.Fprintf(os.Stderr, "line %d\n", i)
		}
		os.Exit(3)
	},
	// stderr writes a CRLF line, a blank line, a 1 MiB line and a last
	// line without a newline.
	"stderr": func() {
		os.Stderr.WriteString("hello\r\n")
		os.Stderr.WriteString("\n")
		os.Stderr.WriteString(strings.Repeat("x", 1<<20) + "\n")
		os.Stderr.WriteString("final")
	},
	// flood writes 4 MiB to stderr, more than any pipe buffer holds.
	"flood": func() {
		line := strings.Repeat("y", 1023) + "\n"
		for i := 0; i < 4<<10; i++ {
			os.Stderr.WriteString(line)
		}
	},
	// exit0 exits at once.
	"exit0": func() {},
	// sleep sleeps until killed, ignoring stdin.
	"sleep": sleepForever,
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

var testExe string // the test binary, run as the child

func TestMain(m *testing.M) {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testExe = exe
	if name := os.Getenv(helperEnv); name != "" {
		h, ok := helpers[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
			os.Exit(2)
		}
		h()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// quickRaceExit stops a child built with -race from sleeping a second
// before it exits.
var quickRaceExit = "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")

// helperSpec describes the test binary running the named helper. The
// -test.run flag makes a child that somehow misses its helper run no test.
func helperSpec(name string, env ...string) Spec {
	return Spec{
		Key:       name,
		Command:   testExe,
		Args:      []string{"-test.run=^$"},
		Env:       append(append(os.Environ(), helperEnv+"="+name, quickRaceExit), env...),
		StopGrace: 5 * time.Second,
	}
}

func start(t *testing.T, spec Spec) *Process {
	t.Helper()
	p, err := Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// watchdog is how long a test waits for anything before it fails, instead
// of hanging.
const watchdog = 10 * time.Second

func waitDone(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(watchdog):
		t.Fatalf("process %d not done after %v", p.Pid(), watchdog)
	}
}

// do runs f and fails the test if it does not return within the watchdog.
func do(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(watchdog):
		t.Fatalf("%s: still blocked after %v", what, watchdog)
	}
}

// waitFor polls cond until it holds, failing the test at the watchdog.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(watchdog)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readAll reads r to its end within the watchdog.
func readAll(t *testing.T, r io.Reader) ([]byte, error) {
	t.Helper()
	var b []byte
	var err error
	do(t, "reading stdout", func() { b, err = io.ReadAll(r) })
	return b, err
}

func exitError(t *testing.T, err error) *ExitError {
	t.Helper()
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Err() = %v (%T), want an *ExitError", err, err)
	}
	return ee
}

// recorder records each Write as one element.
type recorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *recorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(b))
	return len(b), nil
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.writes...)
}

func TestEchoRoundTrip(t *testing.T) {
	t.Parallel()
	p := start(t, helperSpec("echo"))
	if p.Pid() <= 0 {
		t.Fatalf("Pid() = %d", p.Pid())
	}
	big := strings.Repeat("z", 1<<20)
	in := "hello\n" + big + "\n" + "bye\n"
	go func() {
		io.WriteString(p.Stdin(), in)
		p.Stdin().Close()
	}()
	out, err := readAll(t, p.Stdout())
	if err != nil {
		t.Fatalf("reading stdout: %v", err)
	}
	if !bytes.Equal(out, []byte(in)) {
		t.Fatalf("echoed %d bytes, want the %d written", len(out), len(in))
	}
	waitDone(t, p)
	// It exited by itself when its stdin closed, without Stop.
	if ee := exitError(t, p.Err()); ee.Status != "exit status 0" {
		t.Errorf("Status = %q", ee.Status)
	}
}

func TestEnvAndDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := helperSpec("env", "STDIO_TEST_VAR=seen")
	spec.Dir = dir
	p := start(t, spec)
	out, err := readAll(t, p.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2 || lines[0] != "seen" {
		t.Fatalf("child printed %q, want STDIO_TEST_VAR=seen and its directory", out)
	}
	if a, b := evalDir(t, lines[1]), evalDir(t, dir); a != b {
		t.Errorf("child ran in %s, want %s", a, b)
	}
}

func evalDir(t *testing.T, dir string) string {
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A nil Env gives the child our environment. Not parallel: it sets ours.
func TestNilEnvInherits(t *testing.T) {
	t.Setenv(helperEnv, "env")
	t.Setenv("STDIO_TEST_VAR", "inherited")
	name, value, _ := strings.Cut(quickRaceExit, "=")
	t.Setenv(name, value)
	p := start(t, Spec{Key: "inherit", Command: testExe, Args: []string{"-test.run=^$"}})
	out, err := readAll(t, p.Stdout())
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); first != "inherited" {
		t.Fatalf("child printed %q, want the inherited STDIO_TEST_VAR first", out)
	}
}

func TestPathFromEnv(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("needs a symlink without .exe")
	}
	dir := t.TempDir()
	if err := os.Symlink(testExe, filepath.Join(dir, "fake-child")); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("fake-child"); err == nil {
		t.Fatal("fake-child is in our own PATH")
	}
	spec := helperSpec("echo", "PATH="+dir)
	spec.Command = "fake-child"
	p := start(t, spec)
	go func() {
		io.WriteString(p.Stdin(), "via env PATH\n")
		p.Stdin().Close()
	}()
	out, err := readAll(t, p.Stdout())
	if err != nil || string(out) != "via env PATH\n" {
		t.Fatalf("stdout = %q, %v", out, err)
	}
}

// A relative command path is relative to Dir, as the child runs it.
func TestRelativeCommandInDir(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("needs a symlink without .exe")
	}
	dir := t.TempDir()
	if err := os.Symlink(testExe, filepath.Join(dir, "fake-child")); err != nil {
		t.Fatal(err)
	}
	spec := helperSpec("env", "STDIO_TEST_VAR=relative")
	spec.Command = "./fake-child"
	spec.Dir = dir
	p := start(t, spec)
	out, err := readAll(t, p.Stdout())
	if first, _, _ := strings.Cut(string(out), "\n"); err != nil || first != "relative" {
		t.Fatalf("stdout = %q, %v", out, err)
	}
}

func TestStartNotFound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"our PATH", nil},
		{"env PATH", []string{"PATH=" + t.TempDir()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(Spec{Key: "alpha", Command: "nope-stdio-test", Env: tc.env})
			if err == nil {
				p.Stop()
				t.Fatal("Start succeeded")
			}
			getenv := envGetter(tc.env)
			want := fmt.Sprintf(`stdio: start server "alpha": "nope-stdio-test" is not on PATH (%s) nor in %s`,
				getenv("PATH"), strings.Join(installDirs(runtime.GOOS, getenv), ", "))
			if runtime.GOOS != "windows" && err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
			if !errors.Is(err, exec.ErrNotFound) {
				t.Errorf("errors.Is(%v, exec.ErrNotFound) = false", err)
			}
		})
	}
}

func TestStartBadDir(t *testing.T) {
	t.Parallel()
	spec := helperSpec("exit0")
	spec.Key = "alpha"
	spec.Dir = filepath.Join(t.TempDir(), "missing")
	p, err := Start(spec)
	if err == nil {
		p.Stop()
		t.Fatal("Start succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), `stdio: start server "alpha": `) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("error = %v", err)
	}
}

func TestStderrRelay(t *testing.T) {
	t.Parallel()
	var rec recorder
	spec := helperSpec("stderr")
	spec.Key = "alpha"
	spec.Stderr = &rec
	p := start(t, spec)
	waitDone(t, p)
	big := strings.Repeat("x", 1<<20)
	want := []string{"[alpha] hello\n", "[alpha] \n", "[alpha] " + big[:lineMax] + " [cut: 1048576 bytes in all]\n", "[alpha] final\n"}
	got := rec.get()
	if len(got) != len(want) {
		t.Fatalf("%d writes, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("write %d: %.40q (%d bytes), want %.40q (%d bytes)", i, got[i], len(got[i]), want[i], len(want[i]))
		}
	}
	ee := exitError(t, p.Err())
	wantTail := []string{"hello", big[:tailLineMax] + "...", "final"}
	if fmt.Sprint(ee.StderrTail) != fmt.Sprint(wantTail) {
		t.Errorf("StderrTail = %.80q", ee.StderrTail)
	}
}

// With no Stderr writer the pipe is still drained: a child writing more
// than a pipe holds is not blocked.
func TestStderrDiscardedStillDrained(t *testing.T) {
	t.Parallel()
	p := start(t, helperSpec("flood"))
	waitDone(t, p)
	if ee := exitError(t, p.Err()); ee.Status != "exit status 0" || len(ee.StderrTail) != tailLines {
		t.Errorf("Err() = %.100v", ee)
	}
}

func TestExitError(t *testing.T) {
	t.Parallel()
	spec := helperSpec("exit3")
	spec.Key = "alpha"
	p := start(t, spec)
	waitDone(t, p)
	ee := exitError(t, p.Err())
	if ee.Key != "alpha" || ee.Status != "exit status 3" {
		t.Errorf("Key, Status = %q, %q", ee.Key, ee.Status)
	}
	var tail []string
	for i := 3; i <= 12; i++ {
		tail = append(tail, "line "+strconv.Itoa(i))
	}
	if fmt.Sprint(ee.StderrTail) != fmt.Sprint(tail) {
		t.Errorf("StderrTail = %q, want %q", ee.StderrTail, tail)
	}
	want := `server "alpha" exited: exit status 3; last stderr: "line 3" | "line 4" | "line 5" | "line 6" | "line 7" | "line 8" | "line 9" | "line 10" | "line 11" | "line 12"`
	if ee.Error() != want {
		t.Errorf("Error():\n got %s\nwant %s", ee, want)
	}
	var xe *exec.ExitError
	if !errors.As(p.Err(), &xe) || xe.ExitCode() != 3 {
		t.Errorf("Unwrap does not give the *exec.ExitError with code 3: %#v", ee.Err)
	}
	// Stop after the exit returns at once, and changes nothing.
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if p.Err() != error(ee) {
		t.Errorf("Err() changed by Stop to %v", p.Err())
	}
}

func TestExitOnItsOwn(t *testing.T) {
	t.Parallel()
	spec := helperSpec("exit0")
	spec.Key = "alpha"
	p := start(t, spec)
	if _, err := readAll(t, p.Stdout()); err != nil {
		t.Fatalf("stdout: %v, want EOF", err)
	}
	waitDone(t, p)
	ee := exitError(t, p.Err())
	if want := `server "alpha" exited: exit status 0`; ee.Error() != want || ee.Err != nil {
		t.Errorf("Err() = %v (Unwrap %v), want %s", ee, ee.Err, want)
	}
	// Its stdin is closed: writing cannot block.
	if _, err := p.Stdin().Write([]byte("late\n")); err == nil {
		t.Error("writing to the stdin of an exited child succeeded")
	}
	begin := time.Now()
	if err := p.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if d := time.Since(begin); d > time.Second {
		t.Errorf("Stop after exit took %v", d)
	}
}

func TestStopWellBehaved(t *testing.T) {
	t.Parallel()
	spec := helperSpec("echo")
	spec.StopGrace = watchdog
	p := start(t, spec)
	begin := time.Now()
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d >= spec.StopGrace {
		t.Errorf("Stop took %v: it had to signal", d)
	}
	if err := p.Err(); err != nil {
		t.Errorf("Err() = %v, want nil for exit 0 after Stop", err)
	}
	if _, err := readAll(t, p.Stdout()); err != nil {
		t.Errorf("stdout after Stop: %v, want EOF", err)
	}
}

func TestStopConcurrent(t *testing.T) {
	t.Parallel()
	p := start(t, helperSpec("echo"))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- p.Stop()
		}()
	}
	do(t, "concurrent Stop", wg.Wait)
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Stop returned before Done")
	}
	if err := p.Err(); err != nil {
		t.Errorf("Err() = %v", err)
	}
}

// After Stop, and after an exit on its own, none of the package's goroutines
// is left. Not parallel: it counts goroutines.
func TestNoGoroutineLeft(t *testing.T) {
	// Not parallel: it counts the whole process's goroutines.
	warm, err := Start(helperSpec("exit0")) // starts the spawner, if any
	if err != nil {
		t.Fatal(err)
	}
	warm.Stop()
	io.ReadAll(warm.Stdout())
	var base int
	waitFor(t, "the warm-up's goroutines to end", func() bool {
		base = runtime.NumGoroutine()
		time.Sleep(10 * time.Millisecond)
		return runtime.NumGoroutine() == base
	})
	for _, name := range []string{"echo", "exit3", "exit0"} {
		p, err := Start(helperSpec(name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "echo" {
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
		} else {
			waitDone(t, p)
		}
		if _, err := readAll(t, p.Stdout()); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= base })
}
