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

// startCmd starts cmd and puts the child in a kill-on-close job object of
// its own (see job_windows.go). If that fails the child runs anyway, and
// stopping it terminates it alone, as if there were no jobs.
func startCmd(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	attachJob(cmd.Process) // an error leaves the child outside any job of ours
	return nil
}

// waitExited cannot wait without reaping here.
func waitExited(p *os.Process) bool { return false }

// signalGroup terminates the child's job, which is the child and every
// process it started: Windows has no SIGTERM, so both steps of a stop
// terminate. With kill set (the last step of a stop, and the call made once
// the child has exited) the job's handle is closed too, and later calls
// find no job. A child with no job is terminated alone.
func signalGroup(p *os.Process, kill bool) error {
	job, ok := jobOf(p, kill)
	if !ok {
		return killChild(p)
	}
	err := terminateJob(job)
	if err != nil {
		// Stop the child at least; closing the handle kills the rest.
		err = killChild(p)
	}
	if kill {
		syscall.CloseHandle(job) // kills whatever terminateJob left
	}
	return err
}

// killChild terminates the child alone; one that has ended is no error.
// Once the child has been reaped, os reports EINVAL (its handle is
// released), which here also means that it has ended.
func killChild(p *os.Process) error {
	err := p.Kill()
	if errors.Is(err, os.ErrProcessDone) || errors.Is(err, syscall.EINVAL) {
		err = nil
	}
	return err
}
