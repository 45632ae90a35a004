package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// fileMemory is the aggregator's Memory on disk: what each server declared
// and listed when it last ran (its capabilities, instructions, tools,
// prompts, resources and resource templates), or that its last start
// failed; one file a server and scope (what the client declared) in the
// user's cache directory, named by a hash of what starts it (command,
// args, the names of its env, cwd) and the scope, so that no value of the
// config is written in a name, and a changed entry is a new server. Files are the user's alone (0600, in a 0700
// directory), and recalled only while others cannot write them. It is a
// cache: what cannot be read is not remembered, what cannot be written is
// said with --debug, and nothing fails.
type fileMemory struct {
	dir      string
	log      *aggregator.Logger
	warnOnce sync.Once
}

// newFileMemory returns the memory in the user's cache directory
// ($XDG_CACHE_HOME, ~/.cache, %LocalAppData%, ~/Library/Caches), or nil
// when there is none or the user asked for none (--no-memory).
func newFileMemory(log *aggregator.Logger, off bool) aggregator.Memory {
	if off {
		log.Debugf("--no-memory: nothing is remembered between sessions")
		return nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		log.Debugf("servers' capabilities are not remembered between sessions: %v", err)
		return nil
	}
	return &fileMemory{dir: filepath.Join(base, "mcp-simple-aggregator", "servers"), log: log}
}

// path is the file of s in scope: a hash of what starts it and the scope.
func (m *fileMemory) path(s config.Server, scope []byte) string {
	names := make([]string, len(s.Env))
	for i, e := range s.Env {
		names[i] = e.Name // not its value: no secret goes into a hash that could be guessed at
	}
	id, _ := json.Marshal([]any{s.Command, s.Args, names, s.Dir, string(scope)})
	sum := sha256.Sum256(id)
	return filepath.Join(m.dir, hex.EncodeToString(sum[:16])+".json")
}

// Recall reads what s declared when it last started, unless others than
// the user can write the file or a directory above it (what it holds goes
// to the model: instructions no other user may plant).
func (m *fileMemory) Recall(s config.Server, scope []byte) ([]byte, bool) {
	path := m.path(s, scope)
	if err := config.CheckOwnerOnly(path); err != nil {
		m.warnOnce.Do(func() { m.log.Debugf("servers' capabilities are not recalled: %v", err) })
		return nil, false
	}
	b, err := readAtMost(path, maxRecord)
	if err != nil || !json.Valid(b) {
		return nil, false
	}
	return b, true
}

// maxRecord bounds what is remembered of one server: a record larger than
// this (lists of tens of thousands of entries) is neither written nor
// read.
const maxRecord = 32 << 20

// readAtMost reads the file at path, unless it is longer than max bytes.
func readAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: longer than %d bytes", path, max)
	}
	return b, err
}

// Keep writes the record of s, when it differs from what is kept: to a
// file of its own first, then renamed, so that a reader never sees half.
func (m *fileMemory) Keep(s config.Server, scope, record []byte) {
	if len(record) > maxRecord {
		m.log.Debugf("server %q: what it declared and listed is not remembered: %d bytes, more than %d", s.Key, len(record), maxRecord)
		return
	}
	path := m.path(s, scope)
	if old, err := readAtMost(path, maxRecord); err == nil && bytes.Equal(old, record) {
		return
	}
	if err := m.write(path, record); err != nil {
		m.log.Debugf("server %q: what it declared and listed is not remembered: %v", s.Key, err)
	}
}

func (m *fileMemory) write(path string, b []byte) error {
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		return fmt.Errorf("the cache directory: %w", err)
	}
	f, err := os.CreateTemp(m.dir, ".declared-*")
	if err != nil {
		return fmt.Errorf("the cache directory: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
