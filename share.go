package main

// This file is --share: the session side, which gives the aggregator a
// connection to the holder of shared servers for each server, and the
// holder mode of this binary (internal/share).

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/share"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// holderMode is the hidden first argument that makes this binary the
// holder of shared servers (share.RunHolder), followed by the socket
// directory. It is not in the usage text: sessions start it.
const holderMode = "--share-holder"

// defaultShareIdle is the default of --share-idle.
const defaultShareIdle = 5 * time.Minute

// holderLogPath is the holder's log: holder.log in the user's cache
// directory, under mcp-simple-aggregator.
func holderLogPath() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "mcp-simple-aggregator", "holder.log")
}

// runHolder is the holder mode: it tells the session that started it
// ReadyLine once it listens (RunningLine when another holder runs) on its
// stdout, then closes it, and logs to holderLogPath.
func runHolder(dir string) int {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE, syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	path := holderLogPath()
	os.MkdirAll(filepath.Dir(path), 0o700)
	logFile, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		logFile = os.Stderr // the session gave it its log file as stderr, if it could
	}
	log := aggregator.NewLogger(logFile, fmt.Sprintf("mcp-simple-aggregator holder %d: ", os.Getpid()), false)
	defer log.Flush(time.Second)
	say := func(line string) {
		fmt.Fprintln(os.Stdout, line)
		os.Stdout.Close()
	}
	logf := func(format string, args ...any) {
		fmt.Fprint(log, log.Conceal(fmt.Sprintf("mcp-simple-aggregator holder %d: "+format+"\n", append([]any{os.Getpid()}, args...)...)))
	}
	watchdog := startWatchdog(log)
	defer watchdog.Close()
	var hideMu sync.Mutex
	var hidden []config.Server
	err = share.RunHolder(ctx, share.HolderOptions{
		Dir:   dir,
		Logf:  logf,
		Ready: func() { say(share.ReadyLine) },
		Start: func(h *share.Header) (stdio.Started, error) {
			s := config.Server{Key: h.Key}
			for _, kv := range h.KeyEnv {
				name, value, _ := strings.Cut(kv, "=")
				s.Env = append(s.Env, config.EnvVar{Name: name, Value: value})
			}
			hideMu.Lock()
			hidden = append(hidden, s)
			log.Hide(hidden)
			hideMu.Unlock()
			p, err := stdio.Start(stdio.Spec{
				Key: h.Key, Command: h.Command, Args: h.Args, Env: h.Env, Dir: h.Dir,
				Stderr: log, Watchdog: watchdog,
			})
			if err != nil {
				return nil, explainStart(err)
			}
			return p, nil
		},
	})
	if err == share.ErrHolderRunning {
		say(share.RunningLine)
		return 0
	}
	if err != nil {
		logf("%v", err)
		say("error: " + err.Error())
		return 1
	}
	return 0
}

// sharer is the session side of --share: it starts each server through
// the holder, or, when no holder can be reached or started, in the
// session itself (said once in the log).
type sharer struct {
	log   *aggregator.Logger
	idle  time.Duration
	dir   string
	local func(config.Server) (aggregator.Process, error)
	chain config.Chain

	mu     sync.Mutex        // protects the fields below
	failed error             // the holder could not be reached: every server runs here
	told   int               // the holder pid last logged
	how    map[string]string // server key -> how it was started, for --check
}

// note records how server key was started, for --check.
func (sh *sharer) note(key, how string) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.how == nil {
		sh.how = map[string]string{}
	}
	sh.how[key] = how
}

// report writes, for --check --share, whether each server was shared and
// why not.
func (sh *sharer) report(w io.Writer, servers []config.Server) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	fmt.Fprintf(w, "\n--share (socket %s):\n", filepath.Join(sh.dir, share.SocketName))
	for _, s := range servers {
		how := sh.how[s.Key]
		if how == "" {
			how = "not started"
		}
		fmt.Fprintf(w, "  %s: %s\n", s.Key, sh.log.Conceal(how))
	}
	fmt.Fprintln(w, "  (a 2025-era server is shared only by sessions whose client declares the same capabilities and roots)")
}

// start is the aggregator's Start with --share.
func (sh *sharer) start(s config.Server) (aggregator.Process, error) {
	sh.mu.Lock()
	failed := sh.failed
	sh.mu.Unlock()
	if failed != nil {
		sh.note(s.Key, fmt.Sprintf("not shared: runs in this session (%v)", failed))
		return sh.local(s)
	}
	// The holder runs in "/": the server's directory is made absolute here,
	// as this session would have resolved it.
	dir := s.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	} else if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	// The key holds the env the entry sets, not the chain of configs
	// above (ChainEnv): sessions of other config files share too, and a
	// nested aggregator gets the first session's chain (MaxNesting bounds
	// any loop still).
	var keyEnv []string
	for _, v := range s.Env {
		keyEnv = append(keyEnv, v.Name+"="+v.Value)
	}
	hd := share.Header{
		Key: s.Key, Command: s.Command, Args: s.Args, Dir: dir,
		Env:    append(s.Environ(os.Environ()), sh.chain.Env()),
		KeyEnv: keyEnv, IdleMs: sh.idle.Milliseconds(), Pid: os.Getpid(),
	}
	c, err := share.Dial(share.DialOptions{
		Dir: sh.dir, Header: hd,
		StartHolder: sh.spawn,
		StartLocal:  func() (stdio.Started, error) { return sh.local(s) },
		Logf: func(format string, args ...any) {
			fmt.Fprint(sh.log, sh.log.Conceal(fmt.Sprintf("mcp-simple-aggregator: --share: "+format+"\n", args...)))
		},
	})
	if err != nil {
		sh.mu.Lock()
		first := sh.failed == nil
		sh.failed = err
		sh.mu.Unlock()
		if first {
			sh.log.Warnf("--share: %v: this session runs its servers itself (see README.md#many-sessions---share)", err)
		}
		sh.note(s.Key, fmt.Sprintf("not shared: runs in this session (%v)", err))
		return sh.local(s)
	}
	sh.note(s.Key, fmt.Sprintf("shared: held by the holder (pid %d), with the sessions whose entry is the same (key %s)", c.HolderPid(), hd.EntryKey()[:8]))
	sh.mu.Lock()
	pid := c.HolderPid()
	tell := pid != sh.told
	sh.told = pid
	sh.mu.Unlock()
	if tell {
		fmt.Fprintf(sh.log, "mcp-simple-aggregator: --share: servers held by the holder (pid %d) at %s; its log: %s\n",
			pid, filepath.Join(sh.dir, share.SocketName), holderLogPath())
	}
	return c, nil
}

// spawn starts a holder of shared servers.
func (sh *sharer) spawn() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, holderMode, sh.dir)
	cmd.Dir = "/"
	// Its stderr is its log, too: what the runtime writes (a panic, a
	// race report) is not lost.
	path := holderLogPath()
	os.MkdirAll(filepath.Dir(path), 0o700)
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
		defer f.Close()
		cmd.Stderr = f
	}
	return share.SpawnHolder(cmd, 10*time.Second)
}
