package config

import (
	"strings"
	"testing"
	"time"
)

// loadWithin runs Load on path and fails the test when it has not
// returned within 10 s (reading a named pipe with no writer never would).
func loadWithin(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Load(path, testOpts)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%s) has not returned after 10 s", path)
		return nil
	}
}

// A config path that is not a regular file is refused at once, naming
// what it is.
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	err := loadWithin(t, dir)
	if want := "config: " + dir + ": not a regular file (a directory)"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v, want it to start with %q", err, want)
	}
}
