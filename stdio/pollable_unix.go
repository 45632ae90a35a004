//go:build unix

package stdio

import (
	"os"
	"syscall"
	"time"
)

// Pollable returns f as a file Go's poller watches, when f is a pipe or a
// socket (what MCP clients give a server as its stdin and stdout): a
// duplicate of its descriptor in non-blocking mode, so that a Close ends a
// read in progress and writes can be bounded in time (SetReadDeadline,
// SetWriteDeadline work). The duplicate is a file of its own: closing it
// leaves f open. restore puts the pipe back in blocking mode, for whoever
// shares it after the process. Anything else (a terminal, a file), and a
// file the poller watches already, comes back as it is.
func Pollable(f *os.File) (pf *os.File, restore func()) {
	if f.SetDeadline(time.Time{}) == nil {
		// The poller watches it already (it was non-blocking when the
		// process started), and its mode is someone else's to keep.
		return f, func() {}
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, func() {}
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return f, func() {}
	}
	dup := -1
	sc.Control(func(fd uintptr) {
		syscall.ForkLock.RLock() // no child may inherit it before it is close-on-exec
		defer syscall.ForkLock.RUnlock()
		if d, err := syscall.Dup(int(fd)); err == nil {
			syscall.CloseOnExec(d)
			dup = d
		}
	})
	if dup < 0 {
		return f, func() {}
	}
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return f, func() {}
	}
	// The mode belongs to the pipe (both descriptors), not to the duplicate.
	return os.NewFile(uintptr(dup), f.Name()), func() { sc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), false) }) }
}
