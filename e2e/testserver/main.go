// Command testserver is a scriptable MCP server used as the peer under which
// mcp-simple-aggregator is tested end to end and benchmarked.
//
// It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout, uses only the
// standard library and none of the project's own packages, logs only to
// stderr and exits 0 when stdin reaches EOF. Every request is served in its
// own goroutine, so a slow tool never blocks a fast one. Request ids are kept
// as raw bytes and answered exactly as received.
//
// See flags.go for what it can be asked to do, and tools.go for its tools.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
)

// The entry point: main, run (what tests call), and the -started-file line
// written before anything else.

func main() {
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	crashing.Lock() // a crash under way (toolCrash) exits with its own status
	os.Exit(code)
}

// crashing is held by a tool that makes the process exit, so that an end of
// stdin read meanwhile cannot make it exit 0 first.
var crashing sync.Mutex

// run serves MCP on stdin/stdout until stdin reaches EOF and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "testserver:", err)
		return 2
	}
	if cfg.keepLine {
		if _, err := bufio.NewReaderSize(stdin, 64<<10).ReadBytes('\n'); err != nil {
			fmt.Fprintln(stderr, "testserver: -keep-line:", err)
			return 1
		}
		return 0
	}
	if err := noteStart(cfg); err != nil {
		fmt.Fprintln(stderr, "testserver:", err)
		return 1
	}
	return newServer(cfg, stdout, stderr).serve(stdin)
}

// noteStart appends one line to -started-file, before anything is read or
// written: one write with O_APPEND, so that processes starting together
// each leave a whole line.
func noteStart(cfg *config) error {
	if cfg.startedFile == "" {
		return nil
	}
	f, err := os.OpenFile(cfg.startedFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %d\n", cfg.name, os.Getpid())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
