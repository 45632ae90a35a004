//go:build unix

package jsonrpc

import (
	"io"
	"syscall"
)

// directWriter returns a function that writes to w without ever blocking
// when w is a file in non-blocking mode (a pipe made by os.Pipe): it makes
// one attempt and says how much it wrote (0 when the pipe is full). It
// returns nil for any other writer.
func directWriter(w io.Writer) func([]byte) (int, error) {
	sc, ok := w.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	nonblocking := false
	if err := rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = errno == 0 && flags&syscall.O_NONBLOCK != 0
	}); err != nil || !nonblocking {
		return nil
	}
	return func(b []byte) (int, error) {
		var n int
		var werr error
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = syscall.Write(int(fd), b)
			return true // one attempt: never wait here
		}); err != nil {
			return 0, err
		}
		switch werr {
		case nil:
			return n, nil
		case syscall.EAGAIN, syscall.EINTR:
			return 0, nil
		}
		return 0, werr
	}
}
