//go:build unix

package share

import (
	"syscall"
)

// detached makes the holder a session leader: its own session and process
// group, no terminal; a signal for the session's group does not reach it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// Supported: --share works on this system.
const Supported = true
