// mcp-simple-aggregator is one MCP server that bundles many: it starts every
// server of a Claude-style config file over stdio and serves their tools to
// one MCP client as KEY:tool.
//
// Usage:
//
//	mcp-simple-aggregator --config PATH [flags]
//
// Flags:
//
//	--config PATH            the mcpServers config file (required)
//	--separator SEP          text between server key and tool name (default ":",
//	                         or "__" for clients served strict names)
//	--strict-names           serve every client names matching ^[a-zA-Z0-9_-]{1,64}$
//	                         (Claude Desktop always gets them)
//	--name NAME              serverInfo.name to report (default "mcp-simple-aggregator")
//	--startup-timeout DUR    how long a server may take to start (default 30s)
//	--probe-timeout DUR      how long a server may take to answer server/discover
//	                         for a 2026-07-28 client before it is taken for a
//	                         legacy server (default 3s)
//	--input-timeout DUR      how long a call answered input_required waits for
//	                         the client's retry (default 5m)
//	--max-message-size SIZE  the longest message, either way (default 256MiB;
//	                         0: no limit): a longer one from the client gets
//	                         an error, a server that sends one is dropped
//	--reload-poll DUR        how often the config file is looked at for edits,
//	                         which apply while the client stays connected
//	                         (default 2s; 0: only on SIGHUP)
//	--registered-as NAME     the aggregator's name in the client's config, or
//	                         its length: names fit the client's limit with its
//	                         prefix (default: up to 16 characters)
//	--no-memory              remember nothing between sessions: every start
//	                         is a fresh one (see README.md#what-is-remembered)
//	--share                  share one process per server among the sessions
//	                         whose entries are the same (see README.md#many-sessions---share)
//	--share-idle DUR         how long a shared server stays up after its last
//	                         session (default 5m)
//	--check                  start every server, print what it offers, stop,
//	                         exit 0 if all started and 1 otherwise
//	--debug                  log debugging details to stderr
//	--version                print the version and exit
//	--help                   print this text and exit
//
// The protocol is spoken on stdin and stdout; all logging goes to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/share"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// version is the program version: release builds set it with
// -ldflags "-X main.version=..." (.ci/release stamps the git tag or
// commit); otherwise programVersion reads it from the build.
var version = ""

// programVersion is version when it was stamped, else the version Go
// recorded in the build: the module version of a `go install ...@vX.Y.Z`,
// or for a build from a clone a pseudo-version naming the commit
// (v0.0.0-20261123071509-50ddfdedbf4e, "+dirty" with uncommitted changes);
// "dev" when there is none (-buildvcs=false).
func programVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

const usage = `Usage: mcp-simple-aggregator --config PATH [flags]

One MCP server that bundles many: starts every server of a Claude-style
config file ({"mcpServers": {"KEY": {"command", "args", "env"}}}) over stdio
and serves all their tools to one MCP client as KEY:tool.

Flags:
  --config PATH          the mcpServers config file (required)
  --separator SEP        text between server key and tool name (default ":",
                         or "__" for clients served strict names)
  --strict-names         serve every client tool names that match
                         ^[a-zA-Z0-9_-]{1,64}$ (Claude Desktop always gets
                         them: other characters become _, long names are
                         shortened with a hash)
  --name NAME            serverInfo.name to report (default "mcp-simple-aggregator")
  --startup-timeout DUR  how long a server may take to start (default 30s)
  --probe-timeout DUR    how long a server may take to answer server/discover
                         for a 2026-07-28 client before it is taken for a
                         legacy server (default 3s)
  --input-timeout DUR    how long a call answered input_required (for a
                         legacy server's request) waits for the client's
                         retry before it is cancelled (default 5m)
  --max-message-size SIZE
                         the longest message, either way (default 256MiB;
                         0: no limit): a longer one from the client gets an
                         error, a server that sends one is dropped
  --reload-poll DUR      how often the config file is looked at for edits,
                         applied while the client stays connected (default
                         2s; 0: only on SIGHUP)
  --registered-as NAME   the name the aggregator has in the client's config
                         (or its length): tool names are made to fit the
                         client's limit with its prefix (default: 16 characters)
  --no-memory            remember nothing between sessions (what each server
                         declared and listed): every start is a fresh one
  --share                share one process per server among this user's
                         sessions whose entries are the same, through a
                         holder process (README.md#many-sessions---share)
  --share-idle DUR       how long a shared server stays up after its last
                         session (default 5m)
  --check                start every server, print what it offers, stop; exit 0
                         if all started, 1 otherwise
  --debug                log debugging details to stderr
  --version              print the version and exit
  --help                 print this text and exit

Config file: README.md#configure. Flags: README.md#flags. Errors:
README.md#errors-you-may-meet. Each client: README.md#use-it-from-your-client.
`

// exitError carries an exit status other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// errCheckFailed is returned when --check found a server that did not start.
var errCheckFailed = errors.New("not every server started")

// watchdogMode is the hidden first argument that makes this binary the
// aggregator's watchdog (stdio.RunWatchdog): a helper process that kills
// every child's process group when the aggregator dies, SIGKILL included.
const watchdogMode = "__watchdog"

func main() {
	if len(os.Args) == 2 && os.Args[1] == watchdogMode {
		stdio.RunWatchdog(os.Stdin)
		return
	}
	if len(os.Args) == 3 && os.Args[1] == holderMode {
		os.Exit(runHolder(os.Args[2]))
	}
	// A client that goes away closes our stdout and stderr: writes to them
	// must fail with EPIPE rather than kill the process before it has
	// stopped its children. (Notify, not Ignore: an ignored SIGPIPE would
	// be inherited by the children.)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err == nil {
		os.Exit(0)
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if !errors.Is(err, flag.ErrHelp) {
		writeWithin(os.Stderr, exitMessage(err), exitLogWait)
	} else {
		code = 0
	}
	os.Exit(code)
}

// exitLogWait bounds the wait for the last log lines at exit: a host that
// does not read our stderr (no line written for this long) must not keep
// the aggregator from exiting.
const exitLogWait = 100 * time.Millisecond

// writeWithin writes s to w unless that takes longer than d.
func writeWithin(w io.Writer, s string, d time.Duration) {
	written := make(chan struct{})
	go func() {
		defer close(written)
		io.WriteString(w, s)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-written:
	case <-t.C:
	}
}

// run is the whole program; it returns when stdin ends or ctx is done.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	f, err := parseFlags(args, stdout, stderr)
	if err != nil {
		return explained(err, "flags")
	}
	if f.showVersion {
		fmt.Fprintf(stdout, "mcp-simple-aggregator %s\n", programVersion())
		return nil
	}

	log := aggregator.NewLogger(stderr, "mcp-simple-aggregator: ", f.debug)
	defer log.Flush(exitLogWait)
	keySep := f.separator // a key may not contain it
	if keySep == "" {
		keySep = ":"
	}
	opts := config.Options{Separator: keySep}
	watcher := config.NewWatcher(f.configPath, opts) // before Load: an edit in between is seen
	cfg, err := config.Load(f.configPath, opts)
	if err != nil {
		return explained(err, "configure")
	}
	for _, w := range cfg.Warnings {
		log.Warnf("%s", w)
	}
	// A config that lists the aggregator on itself, directly or through
	// other aggregators, would start aggregators without end.
	chain, err := config.ChainFrom(os.Getenv(config.ChainEnv))
	if err == nil {
		chain, err = chain.Join(f.configPath)
	}
	if err != nil {
		return explained(err, "behaviour-you-can-rely-on")
	}
	watchdog := startWatchdog(log)
	defer func() {
		if err := watchdog.Close(); err != nil {
			log.Warnf("%v", err)
		}
	}()
	stdin, stdout, restore := clientPipes(stdin, stdout)
	defer restore()
	start, sharer := starter(f, chain, log, watchdog)
	agg := aggregator.New(aggregator.Options{
		Name:           f.name,
		Version:        programVersion(),
		Separator:      f.separator,
		StrictNames:    f.strictNames,
		StartupTimeout: f.startupTimeout,
		ProbeTimeout:   f.probeTimeout,
		InputTimeout:   f.inputTimeout,
		MaxMessageSize: f.maxMessage,
		ServerNameLen:  f.serverNameLen,
		Servers:        cfg.Servers,
		Skipped:        cfg.Skipped,
		Compound:       cfg.Compound,
		Log:            log,
		Start:          start,
		Memory:         newFileMemory(log, f.noMemory),
	})
	if f.check {
		ok := agg.Check(ctx, stdout)
		if sharer != nil {
			sharer.report(stdout, cfg.Servers)
		}
		if !ok {
			return explained(errCheckFailed, "errors-you-may-meet")
		}
		return nil
	}
	followCtx, stopFollowing := context.WithCancel(ctx)
	followed := followConfig(followCtx, watcher, f, log, agg)
	err = agg.Serve(ctx, stdin, stdout)
	stopFollowing()
	<-followed
	return explained(err, "errors-you-may-meet")
}

// starter is the aggregator's Start: serverStarter's, or with --share
// the sharer's (share.go), which falls back to it.
func starter(f flags, chain config.Chain, log *aggregator.Logger, watchdog *stdio.Watchdog) (func(config.Server) (aggregator.Process, error), *sharer) {
	local := serverStarter(chain, log, watchdog)
	if !f.share {
		return local, nil
	}
	sh := &sharer{log: log, idle: f.shareIdle, dir: share.Dir(), local: local, chain: chain}
	return sh.start, sh
}

// serverStarter returns the aggregator's Start: each server started with
// the chain of configs above it in its environment, its stderr logged and
// its process group told to the watchdog.
func serverStarter(chain config.Chain, log *aggregator.Logger, watchdog *stdio.Watchdog) func(config.Server) (aggregator.Process, error) {
	found := newFoundLog(log)
	return func(s config.Server) (aggregator.Process, error) {
		p, err := stdio.Start(stdio.Spec{
			Key:      s.Key,
			Command:  s.Command,
			Args:     s.Args,
			Env:      append(s.Environ(os.Environ()), chain.Env()),
			Stderr:   log,
			Watchdog: watchdog,
			Dir:      s.Dir,
			FoundIn:  found.of(s),
		})
		if err != nil {
			return nil, explainStart(err) // a nil *stdio.Process would be a non-nil Process
		}
		return p, nil
	}
}

// clientPipes returns stdin and stdout read and written through Go's
// poller when they are pipes or sockets (stdio.Pollable, undone by
// restore): a Close then ends stdin's read, and lines to the client are
// written at once. Any other stdin (a terminal, a file) is a plain reader,
// not a Closer: Serve does not wait on a signal for its read, which a
// Close cannot end (the process exits right after).
func clientPipes(stdin io.Reader, stdout io.Writer) (io.Reader, io.Writer, func()) {
	restoreIn, restoreOut := func() {}, func() {}
	if f, ok := stdin.(*os.File); ok {
		var pf *os.File
		if pf, restoreIn = stdio.Pollable(f); pf == f {
			stdin = struct{ io.Reader }{f}
		} else {
			stdin = pf
		}
	}
	if f, ok := stdout.(*os.File); ok {
		stdout, restoreOut = stdio.Pollable(f)
	}
	return stdin, stdout, func() { restoreIn(); restoreOut() }
}

// startWatchdog starts this binary as the watchdog of the children's
// process groups, or logs why it could not and returns nil: the
// aggregator then serves without one.
func startWatchdog(log *aggregator.Logger) *stdio.Watchdog {
	exe, err := os.Executable()
	if err != nil {
		log.Warnf("no watchdog for the servers' processes: %v", err)
		return nil
	}
	cmd := exec.Command(exe, watchdogMode)
	cmd.Dir = "/" // hold no directory
	wd, err := stdio.StartWatchdog(cmd)
	if err != nil {
		log.Warnf("no watchdog for the servers' processes: %v", err)
		return nil
	}
	return wd
}
