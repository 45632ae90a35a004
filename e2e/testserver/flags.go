package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// The command-line flags: what each one asks of the server, and their
// checks.

// config holds the command-line flags.
type config struct {
	name         string
	tools        int
	toolNames    []string // tools that answer with their own name
	page         int
	instructions string
	version      string
	noise        bool
	stderrLines  int
	initDelay    time.Duration
	hangInit     bool
	exitInit     int // < 0: off
	askOnInit    string
	failList     bool
	tasks        bool
	caps         map[string]bool
	startedFile  string // append one line here at start
	capsJSON     string // raw members added to the capabilities of initialize
	toolsFile    string // a JSON array of tool definitions, read at each tools/list

	hostile        bool          // list and serve the tools of hostile.go
	malformed      bool          // list and serve what clients cannot read (malformed.go)
	exitOnDiscover string        // see hostile.go
	slowRead       time.Duration // read stdin at most 64 KiB at a time, this long apart (see hostile.go)
	keepLine       bool          // read one line into memory and exit: no server
}

// knownCaps are the capabilities -caps accepts; subscribe implies resources.
var knownCaps = []string{"resources", "prompts", "logging", "completions", "subscribe"}

// parseFlags reads the flags into a config; an error is a usage error.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{caps: map[string]bool{}}
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.name, "name", "testserver", "serverInfo.name (also used in resource URIs)")
	fs.IntVar(&cfg.tools, "tools", 0, "number of generated echo-like tools t0..t{N-1}")
	fs.IntVar(&cfg.page, "page", 0, "page size of tools/list, prompts/list, resources/list, resources/templates/list (0: one page)")
	fs.StringVar(&cfg.instructions, "instructions", "", "instructions to return from initialize")
	fs.StringVar(&cfg.version, "version", "", "protocolVersion to answer (default: echo the client's)")
	fs.BoolVar(&cfg.noise, "noise", false, "print a non-JSON line on stdout at start and before the first tools/list answer")
	fs.IntVar(&cfg.stderrLines, "stderr", 0, "print N lines 'stderr line i' to stderr at start")
	fs.DurationVar(&cfg.initDelay, "init-delay", 0, "wait this long before answering initialize")
	fs.BoolVar(&cfg.hangInit, "hang-init", false, "never answer initialize")
	fs.StringVar(&cfg.askOnInit, "ask-on-init", "", "send this request (e.g. roots/list) to the client as soon as notifications/initialized arrives; log 'asked METHOD on init: ANSWER'")
	fs.IntVar(&cfg.exitInit, "exit-init", -1, "on initialize, print 'fatal: bad init' to stderr and exit with this code (-1: off)")
	fs.BoolVar(&cfg.failList, "fail-list", false, "answer tools/list with error -32603 'list failed'")
	fs.BoolVar(&cfg.tasks, "tasks", false, "run tools/call as a task when params.task is set, and serve tasks/get, tasks/result, tasks/cancel, tasks/list (see tasks.go)")
	fs.Func("tool-names", `JSON array of names of tools that answer with the name they were called by, e.g. ["a.b","get weather"]`, func(v string) error {
		return json.Unmarshal([]byte(v), &cfg.toolNames)
	})
	fs.StringVar(&cfg.startedFile, "started-file", "", "append one line 'NAME PID' to this file at start, so a test counts the processes started")
	fs.StringVar(&cfg.capsJSON, "caps-json", "", `raw members added to initialize's capabilities, e.g. "extensions":{"io.modelcontextprotocol/ui":{}},"newThing":{}`)
	fs.StringVar(&cfg.toolsFile, "tools-file", "", "list also the tools of this file (a JSON array of tool definitions), read anew at each tools/list: a test changes what the server lists from one run to the next")
	fs.BoolVar(&cfg.hostile, "hostile", false, "also list and serve the misbehaving tools pid, closeout, flood, samplemany, slowline (see hostile.go)")
	fs.BoolVar(&cfg.malformed, "malformed", false, "also list entries the MCP schema refuses and serve the tool shapeless (see malformed.go)")
	fs.StringVar(&cfg.exitOnDiscover, "exit-on-discover", "", "on server/discover, exit if FILE does not exist (creating it), else answer -32601 (see hostile.go)")
	fs.BoolVar(&cfg.keepLine, "keep-line", false, "serve nothing: read one line of stdin into memory (bufio.Reader.ReadBytes) and exit, a reader that keeps a line and does nothing else (BenchmarkHugeRequest)")
	fs.DurationVar(&cfg.slowRead, "slow-read", 0, "read stdin at most 64 KiB at a time, pausing this long before each read: a server that reads a large request slowly (see hostile.go)")
	caps := fs.String("caps", "", "comma list of extra capabilities: "+strings.Join(knownCaps, ","))
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	for _, c := range strings.Split(*caps, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		ok := false
		for _, k := range knownCaps {
			ok = ok || c == k
		}
		if !ok {
			return nil, fmt.Errorf("unknown capability %q (known: %s)", c, strings.Join(knownCaps, ","))
		}
		cfg.caps[c] = true
	}
	if cfg.caps["subscribe"] {
		cfg.caps["resources"] = true
	}
	if cfg.tools < 0 || cfg.page < 0 {
		return nil, errors.New("-tools and -page must not be negative")
	}
	return cfg, nil
}
