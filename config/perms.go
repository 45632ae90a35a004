package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// OpenError reports a config file that users other than its owner can
// change: the file, or a directory on its way (which lets them put
// another file in its place), is writable by its group or by everyone,
// and a directory has no sticky bit.
type OpenError struct {
	Path string      // the config file
	Open string      // the file or directory that others can write
	Mode os.FileMode // its mode
}

// Error says what others can write and the fix, for example
//
//	config: /home/me/mcp.json: other users can write it (-rw-rw-rw-), so its edits are not followed (it was read at launch); to have them followed: chmod go-w /home/me/mcp.json
func (e *OpenError) Error() string {
	what := "it"
	if e.Open != e.Path {
		what = "its directory " + e.Open
	}
	return fmt.Sprintf("config: %s: other users can write %s (%s), so its edits are not followed (it was read at launch); to have them followed: chmod go-w %s", e.Path, what, e.Mode, e.Open)
}

// ErrOpen is what errors.Is finds in an *OpenError.
var ErrOpen = errors.New("config file writable by other users")

// Is reports whether target is ErrOpen.
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// othersWrite are the permission bits that let users other than the owner
// write: the group's and everyone's.
const othersWrite = 0o022

// CheckOwnerOnly returns an *OpenError when users other than its owner
// can change the config file at path: the file is writable by its group
// or by everyone, or a directory it lies in (up to the root, on the path
// as given and with symbolic links resolved) is, without the sticky bit
// that keeps others from replacing files they do not own (as /tmp has).
// It returns nil when only the owner can, and when it cannot tell: a path
// it cannot look at, and Windows, where the mode bits of os.Stat are no
// permissions (every file that is not read-only shows as writable by all).
// A mount that shows every file as writable by all (WSL's /mnt/c) is
// reported too.
func CheckOwnerOnly(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if fi.Mode().Perm()&othersWrite != 0 {
		return &OpenError{Path: path, Open: path, Mode: fi.Mode()}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	dirs := []string{filepath.Dir(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, dir := range dirs {
		if open, mode := openDir(dir); open != "" {
			return &OpenError{Path: path, Open: open, Mode: mode}
		}
	}
	return nil
}

// openDir returns the first of dir and the directories above it that
// others can write without the sticky bit, and its mode; "" when none.
func openDir(dir string) (string, os.FileMode) {
	for {
		if di, err := os.Stat(dir); err == nil && di.Mode().Perm()&othersWrite != 0 && di.Mode()&os.ModeSticky == 0 {
			return dir, di.Mode()
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", 0
		}
		dir = up
	}
}
