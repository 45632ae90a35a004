//go:build unix

package config

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe with no writer is refused at once: reading it would block
// start-up for good (and signals would go unheard meanwhile).
func TestLoadRefusesANamedPipe(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	err := loadWithin(t, path)
	if want := "config: " + path + ": not a regular file (a named pipe)"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v, want it to start with %q", err, want)
	}
}
