package config

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type reloaded struct {
	cfg *Config
	err error
}

// watch starts a Watcher on a new file holding content, looking every
// millisecond, and returns the file's path, the poke channel and what
// reload is called with. got is unbuffered: reload returns, and Run goes
// on, only once the test has taken what it was called with.
func watch(t *testing.T, content string) (string, chan os.Signal, chan reloaded) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	poke, got := make(chan os.Signal), make(chan reloaded)
	done := make(chan struct{})
	w := NewWatcher(path, Options{LookupEnv: func(string) (string, bool) { return "", false }})
	go func() {
		defer close(done)
		w.Run(ctx, time.Millisecond, poke, func(c *Config, err error) {
			select {
			case got <- reloaded{c, err}:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done // Run returns when its context ends
	})
	return path, poke, got
}

func next(t *testing.T, got chan reloaded) reloaded {
	t.Helper()
	select {
	case r := <-got:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no reload within 10 s")
	}
	return reloaded{}
}

// nextGood is next, past the failed reloads of a file caught half written
// (an edit in place truncates it first).
func nextGood(t *testing.T, got chan reloaded) reloaded {
	t.Helper()
	for {
		if r := next(t, got); r.err == nil {
			return r
		}
	}
}

func serversOf(t *testing.T, r reloaded) string {
	t.Helper()
	if r.err != nil {
		t.Fatalf("reload failed: %v", r.err)
	}
	var keys []string
	for _, s := range r.cfg.Servers {
		keys = append(keys, s.Key+"="+s.Command)
	}
	return strings.Join(keys, " ")
}

const one = `{"mcpServers":{"a":{"command":"x"}}}`

// An edit in place, a file renamed over the path (as editors save), a
// broken edit and the good one after it: each is reloaded, in order.
func TestWatchFollowsTheFile(t *testing.T) {
	t.Parallel()
	path, _, got := watch(t, one)
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"mcpServers":{"a":{"command":"x"},"b":{"command":"y"}}}`)
	if s := serversOf(t, nextGood(t, got)); s != "a=x b=y" {
		t.Errorf("after an edit: %s", s)
	}

	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(`{"mcpServers":{"c":{"command":"z"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if s := serversOf(t, next(t, got)); s != "c=z" {
		t.Errorf("after a rename over it: %s", s)
	}

	write(`{"mcpServers":{"c":{"command":"z"},}`)
	if r := next(t, got); r.err == nil || !strings.Contains(r.err.Error(), path) {
		t.Errorf("a broken edit reloaded as %+v, want an error naming the file", r)
	}
	write(`{"mcpServers":{"d":{"command":"w"}}}`)
	if s := serversOf(t, nextGood(t, got)); s != "d=w" {
		t.Errorf("after the good edit: %s", s)
	}
}

// A poke reloads the file even when it did not change, and only once.
func TestWatchReloadsOnPoke(t *testing.T) {
	t.Parallel()
	_, poke, got := watch(t, one)
	for i := range 3 {
		// Run takes a poke only between reloads, and a reload returns only
		// once its call is taken here (got is unbuffered): the poke is
		// handed over only if the reloads before it (the last poke's) are
		// all taken, and any other reload comes instead of it.
		select {
		case poke <- os.Interrupt:
		case r := <-got:
			t.Fatalf("before poke %d, a reload without a change or a poke (%s)", i+1, serversOf(t, r))
		case <-time.After(10 * time.Second):
			t.Fatalf("poke %d not taken within 10 s", i+1)
		}
		if s := serversOf(t, next(t, got)); s != "a=x" {
			t.Errorf("after poke %d: %s", i+1, s)
		}
	}
}

func TestServerSame(t *testing.T) {
	t.Parallel()
	base := Server{Key: "k", Command: "c", Args: []string{"a"}, Env: []EnvVar{{"A", "1"}}}
	for _, tt := range []struct {
		name string
		edit func(*Server)
		same bool
	}{
		{"unchanged", func(*Server) {}, true},
		{"command", func(s *Server) { s.Command = "d" }, false},
		{"args", func(s *Server) { s.Args = []string{"a", "b"} }, false},
		{"env value", func(s *Server) { s.Env = []EnvVar{{"A", "2"}} }, false},
		{"key", func(s *Server) { s.Key = "j" }, false},
	} {
		s := base
		s.Args, s.Env = append([]string(nil), base.Args...), append([]EnvVar(nil), base.Env...)
		tt.edit(&s)
		if got := base.Same(s); got != tt.same {
			t.Errorf("%s: Same = %v, want %v", tt.name, got, tt.same)
		}
	}
}
