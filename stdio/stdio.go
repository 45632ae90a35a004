// Package stdio starts MCP child servers as processes with pipes, relays their
// stderr, reports how they ended and stops them, together with every process
// they spawned, reliably.
//
// It knows nothing about JSON-RPC: the caller writes lines to [Process.Stdin]
// and reads lines from [Process.Stdout].
//
// # Process groups
//
// On unix each child is started in a process group of its own, so that the
// grandchildren that launchers such as npx and uvx spawn can be signalled
// together with it. When the child exits, on its own or because it was
// stopped, whatever is left of its group is killed: a grandchild cannot keep
// the child's pipes open and so the caller's reader always sees the end of
// the output. A process that left the group (setsid) and still holds a pipe
// open cannot hang the caller either: once the child has exited, a read that
// waits longer than [Spec.StopGrace] for data returns [ErrLeftOpen].
//
// On Linux the child also gets SIGKILL as its parent-death signal, so it dies
// with the aggregator even when the aggregator is killed with SIGKILL. See
// [Start] for how the package copes with that signal being tied to a thread.
// That signal reaches the child alone; a [Watchdog] (a helper process told
// every child's group) kills whole groups when the aggregator dies, on
// every unix.
//
// On Windows each child is put in a job object with kill-on-close right
// after it starts: stopping it terminates its whole tree, what is left when
// it exits is killed, and Windows kills every tree if the aggregator dies.
// A grandchild started in the microseconds before the assignment escapes;
// if no job can be made, the child alone is terminated.
//
// Nothing in this package logs, exits the program or writes to os.Stdout.
package stdio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultStopGrace is the wait for each step of [Process.Stop] when
// [Spec.StopGrace] is zero. Two steps of it (stdin closed, then SIGTERM)
// keep a polite shutdown under the 3 s a client may wait for one.
const DefaultStopGrace = time.Second

// TerminateGrace is how long [Process.Terminate] lets the child's group
// handle SIGTERM before SIGKILL: short enough that a host which sends
// SIGKILL 500 ms after its first signal (Claude Code does) finds the
// aggregator gone, with its children.
const TerminateGrace = 150 * time.Millisecond

// ErrLeftOpen is returned by reads from [Process.Stdout] (and ends the stderr
// relay) when the child has exited and its process group has been killed, but
// the pipe still gives no data and no end of file for [Spec.StopGrace]: some
// process outside the group holds its write end open.
var ErrLeftOpen = errors.New("stdio: pipe held open after the server exited")

// Spec describes a child server to start.
type Spec struct {
	// Key is the server's key, used as the stderr label and in errors.
	Key string

	// Command is the program to run, without a shell. A name without a path
	// separator is looked up like exec.LookPath does, but in the PATH that
	// Env sets when it sets one (a server's configuration may override PATH),
	// else in the aggregator's PATH, and then in the usual install places
	// (see [Start]). A relative path with a separator ("./server.sh") is
	// relative to Dir when Dir is set.
	Command string
	Args    []string

	// Env is the child's full environment, "NAME=value" entries; nil means
	// os.Environ().
	Env []string

	// Dir is the child's working directory; empty means ours.
	Dir string

	// FoundIn, when set, is called with the directory in which Command was
	// found when it is a name that is not on PATH but lies in one of the
	// usual install places (Homebrew, nvm, volta, ...: see [Start]).
	FoundIn func(dir string)

	// Stderr receives each line the child writes to its stderr as
	// "[KEY] line\n", in one Write call per line, so that several children
	// can share one writer (which must then be safe for concurrent use, as
	// *os.File is). Line ends ("\n", "\r\n") are replaced; a last line
	// without a newline is relayed too. A line longer than 16 KiB is cut:
	// its first 16 KiB, back to the start of a UTF-8 character, are relayed
	// followed by " [cut: N bytes in all]" (N: the whole line's length
	// without its end), and the rest is read and dropped. Nil
	// discards the lines, but the pipe is still drained. Write errors are
	// ignored and the pipe is still drained. A Write that blocks delays
	// [Process.Done].
	Stderr io.Writer

	// Watchdog, when set, is told the child's process group, so that the
	// group is killed even if the aggregator is (see [Watchdog]).
	Watchdog *Watchdog

	// StopGrace is the wait for each step of [Process.Stop]; 0 means
	// DefaultStopGrace. It is also how long a read may wait for data on a
	// pipe after the child has exited before giving up with ErrLeftOpen.
	StopGrace time.Duration
}

// Process is a running (or ended) child server. Its methods are safe for
// concurrent use.
type Process struct {
	key   string
	grace time.Duration
	cmd   *exec.Cmd

	watchdog *Watchdog // nil: none

	stdin     *os.File
	stdout    *pipeReader
	stderr    *pipeReader
	stderrLog *stderrLog

	stopping atomic.Bool // Stop was called: an exit with status 0 is no error

	mu     sync.Mutex // protects exited
	exited bool       // the child has exited: its pid may no longer be signalled

	done chan struct{} // closed by wait when everything is over
	err  error         // set by wait before done is closed

	stopOnce sync.Once
	stopErr  error // set inside stopOnce

	hurryOnce sync.Once
	hurry     chan struct{} // closed by Terminate: stop without the polite waits
}

// Start starts the child server that spec describes, with its stdin, stdout
// and stderr connected to pipes. The caller must read [Process.Stdout] until
// it returns an error (io.EOF at a clean end), which also closes it.
//
// A command name that is not on PATH is looked for, without a shell, in the
// places where installers put commands that a minimal PATH (Claude Desktop's
// on macOS) lacks: Homebrew, /usr/local/bin, nvm's default node, volta,
// asdf, ~/.local/bin, ~/.bun/bin, ~/.cargo/bin; on Windows Node.js's and
// npm's directories (npx.cmd, through PATHEXT), nvm-windows, volta, scoop.
// The child then gets that directory first in its PATH, so that a script
// such as npx finds its interpreter beside it.
//
// An error names the server key and wraps the cause, for example
//
//	stdio: start server "alpha": "nope" is not on PATH (/usr/bin:/bin) nor in /opt/homebrew/bin, ...
//
// in which case errors.Is(err, exec.ErrNotFound) holds (the cause is a
// [*NotFoundError]).
//
// Linux delivers the parent-death signal when the thread that forked the
// child exits, not when the process does, and the Go runtime ends a thread
// when a goroutine that locked it returns without unlocking. So that no
// child is killed early by the exit of some unrelated thread, every child is
// forked from one goroutine that locks its thread and never returns; it is
// started by the first call to Start and lives as long as the program.
//
// The parent-death signal reaches the child only, not its grandchildren:
// those the [Spec.Watchdog] kills with the child's group.
func Start(spec Spec) (*Process, error) {
	fail := func(err error) (*Process, error) {
		return nil, fmt.Errorf("stdio: start server %q: %w", spec.Key, err)
	}
	path, installDir, err := resolve(spec)
	if err != nil {
		return fail(err)
	}
	env := spec.Env
	if installDir != "" {
		env = withPATHFirst(env, installDir)
		if spec.FoundIn != nil {
			spec.FoundIn(installDir)
		}
	}
	grace := spec.StopGrace
	if grace <= 0 {
		grace = DefaultStopGrace
	}

	parent, child, err := openPipes()
	if err != nil {
		return fail(err)
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{spec.Command}, spec.Args...),
		Env:         env,
		Dir:         spec.Dir,
		Stdin:       child[0],
		Stdout:      child[1],
		Stderr:      child[2],
		SysProcAttr: sysProcAttr(),
	}
	err = startCmd(cmd)
	closeAll(child[:]) // the child has its own copies now
	if err != nil {
		closeAll(parent[:])
		return fail(err)
	}

	spec.Watchdog.watch(cmd.Process.Pid) // its process group: see sysProcAttr
	p := &Process{
		key:      spec.Key,
		watchdog: spec.Watchdog,
		grace:    grace,
		cmd:      cmd,
		stdin:    parent[0],
		stdout:   newPipeReader(parent[1], grace),
		stderr:   newPipeReader(parent[2], grace),
		done:     make(chan struct{}),
		hurry:    make(chan struct{}),
	}
	p.stderrLog = newStderrLog(spec.Key, spec.Stderr)
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		p.stderrLog.run(p.stderr)
	}()
	go p.wait(stderrDone)
	return p, nil
}

// resolve checks spec's directory and finds its command (findCommand).
func resolve(spec Spec) (path, installDir string, err error) {
	if spec.Dir != "" {
		// Else the child's failing chdir would be reported as
		// "fork/exec COMMAND: no such file or directory".
		fi, err := os.Stat(spec.Dir)
		if err == nil && !fi.IsDir() {
			err = &os.PathError{Op: "chdir", Path: spec.Dir, Err: syscall.ENOTDIR}
		}
		if err != nil {
			return "", "", err
		}
	}
	return findCommand(spec.Command, spec.Env, spec.Dir)
}

// wait reaps the child, kills what is left of its group, waits for the
// stderr relay to finish and then records the outcome and closes done.
func (p *Process) wait(stderrDone <-chan struct{}) {
	proc := p.cmd.Process
	// Where the platform can wait for the exit without reaping, kill the
	// group while the child's pid, which is the group id, is still ours.
	early := waitExited(proc)
	if early {
		p.markExited()
	}
	werr := p.cmd.Wait()
	if !early {
		p.markExited()
	}
	// The child's stdin has no reader any more; close it so that no write
	// to it can block (and so that it is not leaked).
	p.stdin.Close()
	// Reads that find nothing for a grace period from now on give up.
	p.stdout.exited()
	p.stderr.exited()
	<-stderrDone
	p.stderr.Close()

	state := p.cmd.ProcessState
	if werr == nil && p.stopping.Load() {
		p.err = nil
	} else {
		ee := &ExitError{Key: p.key, StderrTail: p.stderrLog.tail(), Err: werr}
		var xe *exec.ExitError
		switch {
		case werr == nil || errors.As(werr, &xe):
			ee.Status = state.String()
		default:
			ee.Status = werr.Error()
		}
		p.err = ee
	}
	close(p.done)
}

// markExited records that the child has exited and kills the rest of its
// process group.
func (p *Process) markExited() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exited = true
	signalGroup(p.cmd.Process, true) // nothing to do about a failure here
	p.watchdog.release(p.cmd.Process.Pid)
}

// signal sends SIGTERM (kill false) or SIGKILL (kill true) to the child's
// process group, unless the child has already exited.
func (p *Process) signal(kill bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return nil
	}
	return signalGroup(p.cmd.Process, kill)
}

// Stdin returns the child's stdin. Closing it asks a well-behaved server to
// exit. It is closed when the child has exited.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout returns the child's stdout. Read it until it returns an error:
// io.EOF once the child and its process group have exited and everything
// they wrote has been read, or ErrLeftOpen (see there). The pipe is closed
// when a read returns an error.
func (p *Process) Stdout() io.Reader { return p.stdout }

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done returns a channel that is closed once the child has exited, been
// reaped, what was left of its process group has been killed and its stderr
// has been relayed to the end.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err reports how the child ended. Before Done is closed it returns nil.
// After, it returns nil if the child exited with status 0 after Stop was
// called, and otherwise an *ExitError: a child that exits by itself, even
// with status 0, has ended unexpectedly, and so has one that Stop had to
// signal.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Stop stops the child gracefully: it closes the child's stdin and waits up
// to StopGrace for the child to exit, then sends SIGTERM to its process group
// and waits up to StopGrace again, then sends SIGKILL to the group and waits
// for the child to be reaped. It returns nil once the child has ended,
// whatever its exit status ([Process.Err] tells that); it returns an error
// only if a signal could not be sent or the child still had not ended
// StopGrace after SIGKILL. Stop may be called many times and from many
// goroutines; every call returns when the first one has finished.
// [Process.Terminate], called at any time, hurries a Stop in progress.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop() })
	return p.stopErr
}

// Terminate stops the child at once, for a host that will not wait: its
// stdin closed and SIGTERM to its process group together, SIGKILL to the
// group TerminateGrace later, then it waits for the child to be reaped. A
// Stop already under way is hurried the same way, from its current step.
// It returns what Stop returns.
func (p *Process) Terminate() error {
	p.hurryOnce.Do(func() { close(p.hurry) })
	return p.Stop()
}

func (p *Process) stop() error {
	p.stopping.Store(true)
	p.stdin.Close() // an error means that it was closed already
	if p.waitDone(p.grace, 0) {
		return nil
	}
	if err := p.signal(false); err != nil {
		return fmt.Errorf("stdio: stop server %q: %w", p.key, err)
	}
	if p.waitDone(p.grace, TerminateGrace) {
		return nil
	}
	if err := p.signal(true); err != nil {
		return fmt.Errorf("stdio: stop server %q: %w", p.key, err)
	}
	if p.waitDone(p.grace, p.grace) {
		return nil
	}
	return fmt.Errorf("stdio: stop server %q: pid %d has not ended %v after SIGKILL", p.key, p.Pid(), p.grace)
}

// waitDone waits for the child to end and reports whether it did: up to d,
// or, once Terminate has been called, up to hurried from then if that is
// sooner.
func (p *Process) waitDone(d, hurried time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	deadline := time.Now().Add(d)
	hurry := p.hurry
	for {
		select {
		case <-p.done:
			return true
		case <-t.C:
			return false
		case <-hurry:
			hurry = nil
			if soon := time.Now().Add(hurried); soon.Before(deadline) {
				t.Reset(time.Until(soon))
			}
		}
	}
}

// ExitError reports a child server that ended unexpectedly.
type ExitError struct {
	Key        string   // the server key
	Status     string   // "exit status 3", "signal: killed", ...
	StderrTail []string // the last lines (at most 10) the child wrote to stderr
	Err        error    // the *exec.ExitError, or the error from waiting; nil for status 0
}

// Error returns, for example,
//
//	server "alpha" exited: exit status 3; last stderr: "boom" | "line 2"
func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString("server ")
	b.WriteString(strconv.Quote(e.Key))
	b.WriteString(" exited: ")
	b.WriteString(e.Status)
	for i, line := range e.StderrTail {
		if i == 0 {
			b.WriteString("; last stderr: ")
		} else {
			b.WriteString(" | ")
		}
		b.WriteString(strconv.Quote(line))
	}
	return b.String()
}

// Unwrap returns the *exec.ExitError or the error from waiting.
func (e *ExitError) Unwrap() error { return e.Err }
