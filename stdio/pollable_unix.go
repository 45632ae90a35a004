//go:build unix

package stdio

import (
	"os"
	"syscall"
	"time"
)

// Pollable returns f as a file Go's poller watches, when f is a pipe or a
// socket (what MCP clients give a server as its stdin and stdout): put in
// non-blocking mode, so that a Close ends a read in progress and writes
// can be bounded in time (SetReadDeadline, SetWriteDeadline work). restore
// puts f back in blocking mode, for whoever shares it after the process.
// Anything else (a terminal, a file) comes back as it is.
//
// The returned file shares f's descriptor: closing it closes f's too.
func Pollable(f *os.File) (pf *os.File, restore func()) {
	if f.SetDeadline(time.Time{}) == nil {
		// The poller watches it already (it was non-blocking when the
		// process started): a second file on its descriptor could not
		// be registered, and its mode is someone else's to keep.
		return f, func() {}
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, func() {}
	}
	fd := f.Fd()
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		return f, func() {}
	}
	return os.NewFile(fd, f.Name()), func() { syscall.SetNonblock(int(fd), false) }
}
