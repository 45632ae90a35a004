//go:build linux

package stdio

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func init() {
	// pdeathsig starts the sleep helper through this package, prints its
	// pid and sleeps until killed.
	helpers["pdeathsig"] = func() {
		p, err := Start(helperSpec("sleep"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(p.Pid())
		sleepForever()
	}
}

// If the aggregator is killed, its children die too.
func TestPdeathsig(t *testing.T) {
	t.Parallel()
	p := start(t, helperSpec("pdeathsig"))
	out := bufio.NewReader(p.Stdout())
	gpid := readPid(t, out)
	t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
	checkRunning(t, gpid)
	// Kill the middle process alone: the grandchild is in a process group
	// of its own, so only the parent-death signal can reach it.
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the grandchild to die with its parent", func() bool { return gone(gpid) })
	waitDone(t, p)
	if ee := exitError(t, p.Err()); ee.Status != "signal: killed" {
		t.Errorf("Status = %q", ee.Status)
	}
}

// A child started from a thread that then ends is not killed by its
// parent-death signal: children are forked from a thread that never ends.
func TestStartFromEndingThread(t *testing.T) {
	t.Parallel()
	spec := helperSpec("sleep")
	spec.StopGrace = 100 * time.Millisecond
	var p *Process
	var tid int
	var err error
	for tid == 0 || tid == os.Getpid() { // not the main thread, which Go never ends
		done := make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread() // never unlocked: the runtime ends this thread
			tid = syscall.Gettid()
			if tid != os.Getpid() {
				p, err = Start(spec)
			}
		}()
		<-done
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	task := "/proc/self/task/" + strconv.Itoa(tid)
	waitFor(t, "the thread to end", func() bool {
		_, err := os.Stat(task)
		return os.IsNotExist(err)
	})
	// Had the thread's end sent SIGKILL, that would be how it ended.
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if ee := exitError(t, p.Err()); ee.Status != "signal: terminated" {
		t.Errorf("Status = %q, want signal: terminated", ee.Status)
	}
}
