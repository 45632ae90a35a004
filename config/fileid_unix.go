//go:build unix

package config

import (
	"fmt"
	"os"
	"syscall"
)

// fileID returns the identity of the file at path: its device and inode,
// the same for every path that leads to it.
func fileID(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "path:" + path, nil
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), nil
}
