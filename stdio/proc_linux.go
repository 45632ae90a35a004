package stdio

import (
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// sysProcAttr puts the child in a process group of its own and has the
// kernel send it SIGKILL when its parent thread (see spawner) dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// spawner forks every child from one thread that lives as long as the
// program, because the parent-death signal fires when the forking thread
// exits, not the process.
var spawner struct {
	once sync.Once
	reqs chan spawnRequest
}

type spawnRequest struct {
	cmd  *exec.Cmd
	errc chan error
}

// startCmd starts cmd from the spawner's thread.
func startCmd(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnRequest)
		go spawn(spawner.reqs)
	})
	errc := make(chan error, 1)
	spawner.reqs <- spawnRequest{cmd, errc}
	return <-errc
}

// spawn runs for the life of the program, locked to its thread, which the
// Go runtime therefore never ends.
func spawn(reqs <-chan spawnRequest) {
	runtime.LockOSThread() // never unlocked
	for r := range reqs {
		r.errc <- r.cmd.Start()
	}
}

// waitExited blocks until the child has exited without reaping it (waitid
// with WNOWAIT), so that its pid, the group id, cannot be reused while the
// rest of the group is killed. It reports whether it did so.
func waitExited(p *os.Process) bool {
	const (
		pPID    = 1          // P_PID
		wExited = 0x4        // WEXITED
		wNoWait = 0x01000000 // WNOWAIT
	)
	var info [128]byte // siginfo_t, which we do not look at
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(p.Pid),
			uintptr(unsafe.Pointer(&info)), wExited|wNoWait, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		return e == 0
	}
}
