package main

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// What a server declared is kept in a file of the user's alone, named by
// what starts the server (not its values), recalled while only the user
// can write it, and not recalled once others can.
func TestFileMemory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "servers")
	m := &fileMemory{dir: dir, log: aggregator.NewLogger(io.Discard, "", false)}
	s := config.Server{Key: "db", Command: "db-server", Args: []string{"--x"}, Env: []config.EnvVar{{Name: "TOKEN", Value: "secret-token"}}}
	scope := []byte("2025-11-25\n{}")
	if _, ok := m.Recall(s, scope); ok {
		t.Fatal("recalled a server never kept")
	}
	declared := []byte(`{"capabilities":{"tools":{}},"instructions":"Ask db."}`)
	m.Keep(s, scope, declared)
	if got, ok := m.Recall(s, scope); !ok || string(got) != string(declared) {
		t.Fatalf("recalled %s, %t; want %s", got, ok, declared)
	}
	other := s
	other.Args = []string{"--y"}
	if _, ok := m.Recall(other, scope); ok {
		t.Error("a server started otherwise (other args) recalls the first one's")
	}
	if _, ok := m.Recall(s, []byte(`2025-11-25\n{"roots":{}}`)); ok {
		t.Error("a client that declared otherwise recalls what the server told the first one")
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the cache holds %v (%v), want one file", entries, err)
	}
	fi, _ := entries[0].Info()
	if b, _ := os.ReadFile(filepath.Join(dir, entries[0].Name())); string(b) != string(declared) || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("the file %s holds %s with mode %v, want what was kept, 0600", entries[0].Name(), b, fi.Mode())
	}
	if runtime.GOOS == "windows" {
		return
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Recall(s, scope); ok {
		t.Error("recalled from a directory everyone can write")
	}
}
