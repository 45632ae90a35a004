package share

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Ready lines: what a holder started by SpawnHolder writes on its stdout
// (a pipe to the session that started it), once, before it closes it.
const (
	ReadyLine   = "ready"   // it listens
	RunningLine = "running" // another holder holds the lock
)

// SpawnHolder starts cmd (this binary in holder mode) detached from the
// session: its own session and process group, no stdin, its stderr what
// the caller set (its log file, where a panic would be seen, or nothing),
// and its stdout a pipe on which it says ReadyLine or
// RunningLine. It returns once one of them is read (the event, not a
// guess), or with an error when the holder ended without either, or
// within wait.
func SpawnHolder(cmd *exec.Cmd, wait time.Duration) error {
	if !Supported {
		return errors.ErrUnsupported
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd.Stdin, cmd.Stdout = nil, w // cmd.Stderr as the caller set it: not the session's
	cmd.SysProcAttr = detached()
	err = cmd.Start()
	w.Close()
	if err != nil {
		return fmt.Errorf("share: start the holder: %w", err)
	}
	go cmd.Wait() // reaped when it exits while this session lives
	r.SetReadDeadline(time.Now().Add(wait))
	line, err := bufio.NewReader(r).ReadString('\n')
	switch strings.TrimSpace(line) {
	case ReadyLine, RunningLine:
		return nil
	}
	if err == nil {
		err = fmt.Errorf("it said %q", line)
	}
	return fmt.Errorf("share: the holder (pid %d) did not start: %w (see its log)", cmd.Process.Pid, err)
}
