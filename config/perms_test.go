package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A config file that users other than its owner can write, or that lies
// in a directory they can write without the sticky bit, is reported with
// what is open and the fix; one only its owner can change is not.
func TestCheckOwnerOnly(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		if err := CheckOwnerOnly(os.Args[0]); err != nil {
			t.Errorf("Windows: %v, want nothing (its mode bits are no permissions)", err)
		}
		return
	}
	for _, tc := range []struct {
		name            string
		file, dir       os.FileMode
		open, wantShown string // "" file, "dir": which is reported
	}{
		{name: "owner only", file: 0o644, dir: 0o755},
		{name: "private", file: 0o600, dir: 0o700},
		{name: "mode 666", file: 0o666, dir: 0o755, open: "file", wantShown: "-rw-rw-rw-"},
		{name: "group-writable", file: 0o664, dir: 0o755, open: "file", wantShown: "-rw-rw-r--"},
		{name: "directory 777", file: 0o644, dir: 0o777, open: "dir", wantShown: "drwxrwxrwx"},
		{name: "directory 1777 (sticky, as /tmp)", file: 0o644, dir: 0o777 | os.ModeSticky},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "conf")
			path := filepath.Join(dir, "mcp.json")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(`{"mcpServers":{}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.file); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.dir); err != nil {
				t.Fatal(err)
			}
			err := CheckOwnerOnly(path)
			if tc.open == "" {
				if err != nil {
					t.Errorf("got %v, want nothing", err)
				}
				return
			}
			open := path
			if tc.open == "dir" {
				open = dir
			}
			var oe *OpenError
			if !errors.As(err, &oe) || !errors.Is(err, ErrOpen) || oe.Open != open {
				t.Fatalf("got %v, want an *OpenError for %s", err, open)
			}
			for _, want := range []string{tc.wantShown, "chmod go-w " + open, "edits are not followed"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
		})
	}
}

// The watcher does not load a file others can write: each change gets the
// *OpenError instead, and an edit made while it was open is not applied
// once it is safe again; a later one is.
func TestWatcherDoesNotFollowAFileOthersCanWrite(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("permissions are not mode bits on Windows")
	}
	path, poke, got := watch(t, `{"mcpServers":{"a":{"command":"a"}}}`)
	if err := os.Chmod(path, 0o666); err != nil { // alone, no change the watcher sees
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"mcpServers":{"evil":{"command":"evil"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	poke <- os.Interrupt
	for r := next(t, got); ; r = next(t, got) {
		if r.cfg != nil {
			t.Fatalf("a file others can write was loaded: %+v", r.cfg.Servers)
		}
		if errors.Is(r.err, ErrOpen) {
			break
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"mcpServers":{"b":{"command":"b"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for {
		r := next(t, got)
		if r.cfg != nil {
			if r.cfg.Servers[0].Key != "b" {
				t.Errorf("loaded %+v, want the edit made once the file was safe", r.cfg.Servers)
			}
			return
		}
		if errors.Is(r.err, ErrOpen) {
			continue // a poll that saw the file before the chmod
		}
	}
}
