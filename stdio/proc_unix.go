//go:build unix && !linux

package stdio

import (
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr puts the child in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

// waitExited cannot wait without reaping here: the group is killed just
// after the child is reaped instead.
func waitExited(p *os.Process) bool { return false }
