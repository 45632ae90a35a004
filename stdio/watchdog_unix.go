//go:build unix

package stdio

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// watchdogGrace is how long the watchdog lets the process groups it
// signals handle SIGTERM before it kills them.
const watchdogGrace = 500 * time.Millisecond

// Watchdog is a helper process that outlives the aggregator only to clean
// up after it: it learns each child's process group over a pipe and, when
// that pipe closes (the aggregator exited, however it died: SIGKILL
// included), sends SIGTERM to every group still listed and SIGKILL
// watchdogGrace later. Grandchildren in a child's group (npx -> node,
// `sh -c 'sleep 1000 & exec server'`) go with it; a process that left the
// group (setsid, a daemon) is out of its reach.
//
// Its methods are safe for concurrent use, and do nothing on a nil
// *Watchdog.
type Watchdog struct {
	cmd *exec.Cmd

	mu  sync.Mutex // protects w
	w   *os.File   // the pipe to the watchdog's stdin; nil once closed
	err error      // the first failed write: the watchdog is gone
}

// StartWatchdog starts cmd as the watchdog: cmd must run [RunWatchdog] on
// its stdin (the aggregator runs its own binary in a hidden mode). It is
// started in a process group of its own, so that a signal meant for the
// aggregator's group does not reach it, with no output.
func StartWatchdog(cmd *exec.Cmd) (*Watchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdio: start watchdog: %w", err)
	}
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("stdio: start watchdog: %w", err)
	}
	return &Watchdog{cmd: cmd, w: w}, nil
}

// watch tells the watchdog about the process group pgid.
func (wd *Watchdog) watch(pgid int) { wd.send('+', pgid) }

// release tells the watchdog that the process group pgid is gone.
func (wd *Watchdog) release(pgid int) { wd.send('-', pgid) }

// send writes one line, "+PGID" or "-PGID". A line is a few bytes and the
// watchdog reads at once, so the write does not block.
func (wd *Watchdog) send(op byte, pgid int) {
	if wd == nil {
		return
	}
	line := strconv.AppendInt([]byte{op}, int64(pgid), 10)
	line = append(line, '\n')
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.w == nil || wd.err != nil {
		return
	}
	if _, err := wd.w.Write(line); err != nil {
		wd.err = err
	}
}

// Close closes the pipe, so that the watchdog kills whatever groups are
// still listed (none after every child was stopped) and exits, and waits
// for it to exit.
func (wd *Watchdog) Close() error {
	if wd == nil {
		return nil
	}
	wd.mu.Lock()
	w := wd.w
	wd.w = nil
	wd.mu.Unlock()
	if w == nil {
		return nil
	}
	w.Close()
	if err := wd.cmd.Wait(); err != nil {
		return fmt.Errorf("stdio: watchdog: %w", err)
	}
	return nil
}

// RunWatchdog is the watchdog process: it reads "+PGID" and "-PGID" lines
// from r until r ends, then signals every process group still listed:
// SIGTERM, and SIGKILL to those left watchdogGrace later. It ignores
// SIGINT, SIGTERM and SIGHUP: only the end of r ends it.
func RunWatchdog(r io.Reader) {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	groups := make(map[int]bool)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(string(line[1:]))
		if err != nil || pgid <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			groups[pgid] = true
		case '-':
			delete(groups, pgid)
		}
	}
	killGroups(groups)
}

// killGroups sends SIGTERM to each group, waits up to watchdogGrace for
// them to be gone and sends SIGKILL to those that are not.
func killGroups(groups map[int]bool) {
	for pgid := range groups {
		if syscall.Kill(-pgid, syscall.SIGTERM) == syscall.ESRCH {
			delete(groups, pgid)
		}
	}
	deadline := time.Now().Add(watchdogGrace)
	for len(groups) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // polling processes we are not the parent of
		for pgid := range groups {
			if syscall.Kill(-pgid, 0) == syscall.ESRCH {
				delete(groups, pgid)
			}
		}
	}
	for pgid := range groups {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
