//go:build unix

package stdio

import (
	"errors"
	"os"
	"syscall"
)

// signalGroup sends SIGTERM, or SIGKILL when kill is set, to the process
// group led by p. A group that is gone is no error. If the child has moved
// to another group, it is signalled alone.
func signalGroup(p *os.Process, kill bool) error {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	err := syscall.Kill(-p.Pid, sig)
	if err == syscall.ESRCH {
		err = p.Signal(sig)
		if errors.Is(err, os.ErrProcessDone) {
			err = nil
		}
	}
	return err
}
