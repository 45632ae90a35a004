//go:build unix

package share

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on path, without waiting: held by
// another process, it fails with ErrHolderRunning. The lock goes with the
// process, however it ends.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("share: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrHolderRunning
		}
		return nil, fmt.Errorf("share: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
