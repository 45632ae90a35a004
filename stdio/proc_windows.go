package stdio

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr gives the child a console process group of its own, so that a
// Ctrl-C meant for the aggregator does not reach it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

// waitExited cannot wait without reaping here.
func waitExited(p *os.Process) bool { return false }

// signalGroup terminates the child: Windows has no SIGTERM and no group to
// signal, so both steps are TerminateProcess of the child alone.
func signalGroup(p *os.Process, kill bool) error {
	err := p.Kill()
	if errors.Is(err, os.ErrProcessDone) {
		err = nil
	}
	return err
}
