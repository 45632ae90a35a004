//go:build unix

package share

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestDirFromXDGRuntimeDir(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1000")
	if got, want := Dir(), "/run/user/1000/mcp-simple-aggregator"; got != want {
		t.Errorf("Dir() = %q, want %q", got, want)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	if got := Dir(); !strings.HasPrefix(got, os.TempDir()) || !strings.HasSuffix(got, "-"+strconv.Itoa(os.Getuid())) {
		t.Errorf("Dir() without XDG_RUNTIME_DIR = %q, want under %s, ending in the uid", got, os.TempDir())
	}
}

func TestPrepareDirCreates0700(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if err := PrepareDir(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %o, want 0700", fi.Mode().Perm())
	}
	if err := PrepareDir(dir); err != nil { // again: it exists and is fine
		t.Fatal(err)
	}
}

func TestCheckDirRefuses(t *testing.T) {
	base := t.TempDir()
	loose := filepath.Join(base, "loose")
	os.Mkdir(loose, 0o700)
	os.Chmod(loose, 0o755)
	group := filepath.Join(base, "group")
	os.Mkdir(group, 0o700)
	os.Chmod(group, 0o710)
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(base, "link")
	os.Symlink(real, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	sticky := filepath.Join(base, "sticky")
	os.Mkdir(sticky, 0o700)
	os.Chmod(sticky, 0o700|os.ModeSticky)
	for _, c := range []struct{ path, wrong string }{
		{loose, "mode 0755"},
		{group, "mode 0710"},
		{link, "symlink"},
		{file, "not a directory"},
		{sticky, "sticky"},
		{filepath.Join(base, "missing"), "cannot be looked at"},
	} {
		err := CheckDir(c.path)
		var de *DirError
		if !errors.As(err, &de) || de.Path != c.path || !strings.Contains(err.Error(), c.wrong) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("CheckDir(%s) = %v, want a DirError naming the path and %q", c.path, err, c.wrong)
		}
	}
	if err := CheckDir(real); err != nil {
		t.Errorf("CheckDir(a 0700 directory) = %v", err)
	}
	if err := PrepareDir(loose); err == nil {
		t.Error("PrepareDir of an existing 0755 directory: no error (it must not be repaired silently)")
	}
}
