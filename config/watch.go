package config

import (
	"context"
	"os"
	"slices"
	"time"
)

// Watcher follows a configuration file: see Run.
type Watcher struct {
	path string
	opts Options
	last os.FileInfo // the file as last looked at; nil when there was none
}

// NewWatcher looks at the file at path now: a change after this call is
// one Run sees. Make it before loading the file the first time, so that an
// edit in between is not missed.
func NewWatcher(path string, opts Options) *Watcher {
	last, _ := os.Stat(path)
	return &Watcher{path: path, opts: opts, last: last}
}

// Run follows the file while ctx lasts: every interval (none when it is
// not positive) it looks at the file (os.Stat: which file the path leads
// to, its size and modification time), and at once whenever poke receives
// (SIGHUP, say). When the file
// changed (a save in place, or a new file renamed over it, as editors
// save), or on every poke, it is loaded again and reload is called with
// the new Config, or with the error of a file that no longer loads (the
// caller then keeps what it runs). A file that vanished for a moment
// (between an editor's delete and its rename) is looked at again at the
// next interval. A file that users other than its owner can change
// (CheckOwnerOnly) is not loaded: reload is called with the *OpenError
// instead, at each change, and an edit made while it was so is never
// applied by the poll, not even once the file is safe again (only a later
// edit, or a poke, is).
// reload runs on Run's goroutine, one call at a time. Run returns when
// ctx ends. A stat each interval is all it costs while nothing changes.
func (w *Watcher) Run(ctx context.Context, interval time.Duration, poke <-chan os.Signal, reload func(*Config, error)) {
	var ticks <-chan time.Time
	if interval > 0 {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		ticks = tick.C
	}
	for {
		forced := false
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		case <-poke:
			forced = true
		}
		now, err := os.Stat(w.path)
		if err != nil && !forced {
			continue // gone for a moment, perhaps: look again later
		}
		if !forced && !changed(w.last, now) {
			continue
		}
		w.last = now
		if err := CheckOwnerOnly(w.path); err != nil {
			reload(nil, err)
			continue
		}
		reload(Load(w.path, w.opts))
	}
}

// changed reports whether the file now is another than the one last
// looked at, or was written since.
func changed(last, now os.FileInfo) bool {
	if last == nil || now == nil {
		return last != now
	}
	return !os.SameFile(last, now) || !last.ModTime().Equal(now.ModTime()) || last.Size() != now.Size()
}

// Same reports whether s and t run the same server: the same key, command,
// args, env (after expansion) and cwd. What they expose of it (Tools) does
// not matter: a server is not restarted for that.
func (s Server) Same(t Server) bool {
	return s.Key == t.Key && s.Command == t.Command && slices.Equal(s.Args, t.Args) && slices.Equal(s.Env, t.Env) && s.Dir == t.Dir
}
