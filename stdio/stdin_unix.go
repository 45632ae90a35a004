//go:build unix

package stdio

import (
	"io"
	"os"
	"syscall"
)

// Stdin returns the process's standard input as a file whose Close ends a
// Read in progress, so that a server can stop reading its client at once
// when it is told to stop. A pipe, socket or terminal is put in
// non-blocking mode and read through the runtime's poller (a blocking
// read(2) cannot be interrupted); restore puts the descriptor back in
// blocking mode, for whoever shares it, and is to be called before the
// program exits. A regular file is read as it is: its reads never wait.
func Stdin() (in io.Reader, restore func()) {
	const fd = 0 // not os.Stdin.Fd(), which would make the descriptor blocking
	flags, err := fcntlGetfl(fd)
	if err != nil || flags&syscall.O_NONBLOCK != 0 {
		return os.NewFile(fd, "/dev/stdin"), func() {}
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return os.NewFile(fd, "/dev/stdin"), func() {}
	}
	return os.NewFile(fd, "/dev/stdin"), func() { syscall.SetNonblock(fd, false) }
}

func fcntlGetfl(fd int) (int, error) {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(flags), nil
}
