package share

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// The socket directory: where the holder's socket, lock file and nothing
// else live. It is the user's alone: created 0700, and before each use
// checked to be a real directory (no symlink), owned by this user, with
// mode 0700 exactly. Anything else is refused, never repaired: another
// user could have made it to catch the sessions' traffic.

// dirName is the directory's name under the runtime or temp directory.
const dirName = "mcp-simple-aggregator"

// Dir returns the socket directory: $XDG_RUNTIME_DIR/mcp-simple-aggregator,
// else <temp>/mcp-simple-aggregator-<uid>; on Windows
// %LocalAppData%\mcp-simple-aggregator. It does not create or check it
// (see [PrepareDir]).
func Dir() string {
	if runtime.GOOS == "windows" {
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, dirName)
		}
		return filepath.Join(os.TempDir(), dirName)
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, dirName)
	}
	return filepath.Join(os.TempDir(), dirName+"-"+strconv.Itoa(os.Getuid()))
}

// DirError says why the socket directory was refused.
type DirError struct {
	Path  string
	Wrong string // what is wrong with it, in words
	Err   error  // the cause, if an operation failed
}

func (e *DirError) Error() string {
	msg := fmt.Sprintf("share: socket directory %s: %s", e.Path, e.Wrong)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *DirError) Unwrap() error { return e.Err }

// PrepareDir creates dir (mode 0700) unless it exists, and checks it
// (CheckDir).
func PrepareDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return &DirError{dir, "cannot be created", err}
	}
	return CheckDir(dir)
}

// CheckDir checks that dir is a directory, not a symlink, owned by this
// user, with mode 0700 exactly; the error names the path and what is wrong.
func CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return &DirError{dir, "cannot be looked at", err}
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &DirError{Path: dir, Wrong: "is a symlink (refused: it must be a directory of its own)"}
	case !fi.IsDir():
		return &DirError{Path: dir, Wrong: "is not a directory"}
	}
	if runtime.GOOS == "windows" { // %LocalAppData% is the user's; no modes
		return nil
	}
	if uid, ok := ownerOf(fi); ok && uid != os.Getuid() {
		return &DirError{Path: dir, Wrong: fmt.Sprintf("is owned by uid %d, not by this user (uid %d)", uid, os.Getuid())}
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		return &DirError{Path: dir, Wrong: fmt.Sprintf("has mode %04o, not 0700 (fix with chmod 700, or remove it)", perm)}
	}
	if fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		return &DirError{Path: dir, Wrong: "has the setuid, setgid or sticky bit (fix with chmod 700, or remove it)"}
	}
	return nil
}
