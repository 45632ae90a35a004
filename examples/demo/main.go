// Command demo shows the job mcp-simple-aggregator exists for: one client,
// many servers. It builds the aggregator from this repository, starts it
// over examples/demo.json (two example servers, notes and calc, each run
// with go run) and acts as the client of one session, printing what it
// sends and what comes back: the initialize answer, one tool list merged
// from both servers, calls routed to each, and a server's error passed
// through as the server sent it. Offline; from a clone:
//
//	go run ./examples/demo
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// modulePath identifies the repository's go.mod.
const modulePath = "module github.com/mcp-simple-aggregator/mcp-simple-aggregator"

// sessionLimit bounds the whole demo: a hung process must not hang it.
const sessionLimit = 2 * time.Minute

func main() {
	log.SetFlags(0)
	log.SetPrefix("demo: ")
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run builds the aggregator, runs the session and reports it on out.
func run(out io.Writer) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mcp-demo-")
	if err != nil {
		return fmt.Errorf("temporary directory for the aggregator: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "mcp-simple-aggregator")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = root
	if msg, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of the aggregator in %s: %w\n%s", root, err, msg)
	}
	// The config runs the servers with go run: compiled now, their start
	// is a link, not a compile that a loaded machine could stretch past
	// the start-up timeout.
	servers := exec.Command("go", "build", "./examples/notes", "./examples/calc")
	servers.Dir = root
	if msg, err := servers.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of the example servers in %s: %w\n%s", root, err, msg)
	}

	ctx, cancel := context.WithTimeout(context.Background(), sessionLimit)
	defer cancel()
	// --no-memory: the aggregator neither reads nor writes what servers
	// declared and listed in the user's cache, so every demo is a first
	// start, as on a new install; the servers inherit the user's
	// environment unchanged (their Go build cache among it).
	cmd := exec.CommandContext(ctx, bin, "--config", filepath.Join("examples", "demo.json"), "--no-memory")
	cmd.Dir = root // the config runs "go run ./examples/notes"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	c, err := startClient(cmd)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "mcp-simple-aggregator --config examples/demo.json: one client, two servers (notes, calc), one connection.\n")
	sessionErr := session(c, out)
	c.stdin.Close() // the polite shutdown: the aggregator stops its servers and exits
	waitErr := cmd.Wait()
	if stderr.Len() > 0 {
		fmt.Fprintf(out, "\nThe aggregator's log (stderr):\n%s", indent(stderr.String(), "    "))
	}
	if sessionErr != nil {
		return sessionErr
	}
	if waitErr != nil {
		return fmt.Errorf("the aggregator ended with %w", waitErr)
	}
	fmt.Fprintf(out, "\nStdin closed: the aggregator stopped both servers and exited with status 0.\n")
	return nil
}

// session is the client's side of the demo.
func session(c *client, out io.Writer) error {
	init, err := c.call(out, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"demo","version":"1.0.0"}}`)
	if err != nil {
		return err
	}
	if err := c.notify("notifications/initialized"); err != nil {
		return err
	}
	printInitialize(out, init.Result)

	list, err := c.fullList(out)
	if err != nil {
		return err
	}
	if err := printTools(out, list.Result); err != nil {
		return err
	}

	for _, call := range []struct{ tool, args, server string }{
		{"notes:add", `{"title":"groceries","text":"eggs, milk, coffee"}`, "notes"},
		{"notes:read", `{"title":"groceries"}`, "notes"},
		{"calc:divide", `{"a":22,"b":7}`, "calc"},
	} {
		res, err := c.callTool(out, call.tool, call.args)
		if err != nil {
			return err
		}
		_, name, _ := strings.Cut(call.tool, ":")
		fmt.Fprintf(out, "<-- %s\n    (routed to server %s as its tool %q)\n", toolText(res.Result), call.server, name)
	}

	res, err := c.callTool(out, "calc:divide", `{"a":1,"b":0}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "<-- calc's error, passed through byte for byte as calc sent it:\n    %s\n", res.Result)
	return nil
}

// fullList lists the tools as a client that fetches the list again on
// notifications/tools/list_changed does, until both servers' are in: the
// servers start for the first list (go run compiles them first), which
// waits 4 s for them (the demo is a client the aggregator does not know),
// and a server up later is announced.
func (c *client) fullList(out io.Writer) (*response, error) {
	fmt.Fprintf(out, "\n--> tools/list\n")
	for {
		list, err := c.request("tools/list", `{}`)
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(list.Result), `"notes:`) && strings.Contains(string(list.Result), `"calc:`) {
			return list, nil
		}
		if err := c.awaitListChanged(); err != nil {
			return nil, err
		}
	}
}

// repoRoot finds the clone this demo belongs to: the working directory or
// one above it, holding the aggregator's go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(mod, []byte(modulePath+"\n")) {
			return dir, nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("reading %s: %w", filepath.Join(dir, "go.mod"), err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run the demo from a clone of mcp-simple-aggregator: go run ./examples/demo")
		}
		dir = parent
	}
}

// indent puts prefix before every line of s but empty ones.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}
