//go:build !unix

package stdio

import (
	"io"
	"os/exec"
)

// Watchdog is not needed where there are no process groups to kill: on
// Windows each child's job object, closed by the system when the
// aggregator dies, ends the child's whole tree.
type Watchdog struct{}

// StartWatchdog starts nothing here and returns a nil *Watchdog.
func StartWatchdog(cmd *exec.Cmd) (*Watchdog, error) { return nil, nil }

func (wd *Watchdog) watch(pgid int)   {}
func (wd *Watchdog) release(pgid int) {}

// Close does nothing here.
func (wd *Watchdog) Close() error { return nil }

// RunWatchdog reads r to its end.
func RunWatchdog(r io.Reader) { io.Copy(io.Discard, r) }
