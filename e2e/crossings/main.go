// Command crossings measures how many files a message runs code in on its
// way through the aggregator, leg by leg: a client's tools/call to its
// server and the server's answer back; a server's
// sampling/createMessage to the client and the client's answer back; a
// server's progress. It counts the files whose statements ran (coverage
// counters, cleared before each leg and read after it), so a helper file
// counts as much as a route: the measure is what a newcomer following the
// message opens. Each leg runs three times, after a round that warms up; a
// file seen in any of them counts.
//
// The bound (-max) is on the files of package aggregator, the package
// whose files issue 30 counted (33 of its 39 in one cycle); the files of
// its internal packages that ran are listed beside them: each of those is
// a package with an API of its own (the server, the tables of ids in
// flight, the eras' conversions), which the compiler keeps from reaching
// the session, and a reader follows a call into one as into the standard
// library's. The legs are measured for a client of each era over a legacy
// server; -max bounds a legacy client's, -max-modern a 2026-07-28
// client's, whose call to a legacy server also runs through the era
// pairing's routine (input_modern.go and the state of its exchanges).

// It must be built with coverage counters it can clear, itself among the
// packages covered (a main package that is not covered never settles the
// counter mode that ClearCounters asks for):
//
//	go build -cover -covermode=atomic -coverpkg=./aggregator/...,./e2e/crossings -o crossings ./e2e/crossings
//	./crossings -max 5
//
// e2e's TestCrossings builds and runs it so, and compares what it prints
// with e2e/testdata/crossings.txt. It reads its counters with go tool
// covdata, prints each leg's files and exits 1 when a leg crosses more
// files of package aggregator than its bound (-v: every block that ran,
// on stderr, under its leg).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/coverage"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

var (
	limit       = flag.Int("max", 0, "exit 1 when a leg of a legacy client's crosses more files of package aggregator than this (0: report only)")
	limitModern = flag.Int("max-modern", 0, "the same bound for a 2026-07-28 client's legs")
	verbose     = flag.Bool("v", false, "print, on stderr, the first line of every block that ran")
)

// legs are the legs measured, in the order the report prints them: each
// of a legacy client's (it initialized the session) and, prefixed, of a
// 2026-07-28 client's, whose sampling request comes as its call's
// input_required answer and is answered by the call's retry.
var legs = []string{
	"tools/call: client to server",
	"tools/call: its answer, server to client",
	"sampling/createMessage: server to client",
	"sampling/createMessage: its answer, client to server",
	"notifications/progress: server to client",
}

// modernPrefix names the legs of a 2026-07-28 client.
const modernPrefix = "2026-07-28 client: "

func main() {
	log.SetPrefix("crossings: ")
	log.SetFlags(0)
	flag.Parse()
	if err := run(*limit, *limitModern, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(bound, boundModern int, out io.Writer) error {
	if err := coverage.ClearCounters(); err != nil {
		return fmt.Errorf("build it with -cover -covermode=atomic -coverpkg=./aggregator/...,./e2e/crossings (the program itself among them, so that its counter mode is known): %w", err)
	}
	dir, err := os.MkdirTemp("", "crossings")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files, err := measure(dir, false)
	if err != nil {
		return err
	}
	modern, err := measure(dir, true)
	if err != nil {
		return err
	}
	for leg, fs := range modern {
		files[modernPrefix+leg] = fs
	}
	var over []string
	for _, leg := range append(legs, prefixed(modernPrefix, legs)...) {
		var own, internal []string
		for _, f := range files[leg] {
			if rest, ok := strings.CutPrefix(f, "internal/"); ok {
				internal = append(internal, rest)
			} else {
				own = append(own, f)
			}
		}
		fmt.Fprintf(out, "%s\n  %d files of package aggregator: %s\n  %d of its internal packages: %s\n",
			leg, len(own), strings.Join(own, " "), len(internal), strings.Join(internal, " "))
		if len(own) == 0 {
			return fmt.Errorf("%s: no file of package aggregator ran: the measure is broken", leg)
		}
		b := bound
		if strings.HasPrefix(leg, modernPrefix) {
			b = boundModern
		}
		if b > 0 && len(own) > b {
			over = append(over, fmt.Sprintf("%s: %d files, more than %d", leg, len(own), b))
		}
	}
	if over != nil {
		return fmt.Errorf("too many files of package aggregator crossed: %s", strings.Join(over, "; "))
	}
	return nil
}

// prefixed returns each of names with prefix before it.
func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// modernMeta is the _meta a 2026-07-28 client's request carries.
const modernMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"crossings","version":"1"}`

// sampled is the client's answer to the sampling request.
const sampled = `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`

// measure drives one session, of a legacy client or of a 2026-07-28 one,
// through every leg, four rounds (the first uncounted), and returns the
// files of aggregator/ each leg ran code in.
func measure(dir string, modern bool) (map[string][]string, error) {
	ch := newChild()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := aggregator.New(aggregator.Options{
		Name: "crossings", Version: "1", Separator: ":",
		Servers: []config.Server{{Key: "alpha", Command: "in-process"}},
		Start:   func(config.Server) (aggregator.Process, error) { return ch, nil },
		Log:     aggregator.NewLogger(io.Discard, "", false),
	})
	served := make(chan error, 1)
	go func() { served <- a.Serve(context.Background(), inR, outW); outW.Close() }()
	defer func() { inW.Close(); io.Copy(io.Discard, outR); <-served }()
	client := bufio.NewReader(outR)
	send := func(line string) error { _, err := io.WriteString(inW, line+"\n"); return err }
	read := func() (*jsonrpc.Message, string, error) {
		l, err := client.ReadString('\n')
		if err != nil {
			return nil, "", fmt.Errorf("the aggregator's output ended: %w", err)
		}
		m, err := jsonrpc.Parse([]byte(l))
		return m, l, err
	}
	ask := func(line string) error {
		if err := send(line); err != nil {
			return err
		}
		_, _, err := read()
		return err
	}
	meta := ""
	if modern {
		meta = modernMeta + ","
		if err := ask(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{` + modernMeta + `}}}`); err != nil {
			return nil, err
		}
	} else {
		if err := ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"crossings","version":"1"}}}`); err != nil {
			return nil, err
		}
		if err := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			return nil, err
		}
		if err := ask(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); err != nil {
			return nil, err
		}
	}

	seen := map[string]map[string]bool{}
	for round := range 4 {
		id := strconv.Itoa(10 + round)
		answerID := id                         // the id the call's answer comes under
		var sampleID, requestState, key string // the sampling request as the client got it
		steps := []func() error{
			func() error { // tools/call: client to server
				if err := send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"alpha:echo","arguments":{},"_meta":{` + meta + `"progressToken":"p"}}}`); err != nil {
					return err
				}
				<-ch.called
				return nil
			},
			func() error { // its answer
				ch.answer <- struct{}{}
				m, l, err := read()
				if err != nil || string(m.ID) != answerID || m.Result == nil {
					return fmt.Errorf("want the answer to %s, got %s (%v)", answerID, l, err)
				}
				return nil
			},
			func() error { // sampling: server to client
				ch.sample <- struct{}{}
				m, l, err := read()
				if err != nil {
					return fmt.Errorf("want the sampling request, got %s (%v)", l, err)
				}
				if !modern {
					if m.Method != "sampling/createMessage" {
						return fmt.Errorf("want the sampling request, got %s", l)
					}
					sampleID = string(m.ID)
					return nil
				}
				// A 2026-07-28 client gets it as its call's answer.
				var r struct {
					ResultType    string                     `json:"resultType"`
					InputRequests map[string]json.RawMessage `json:"inputRequests"`
					RequestState  string                     `json:"requestState"`
				}
				if string(m.ID) != id || json.Unmarshal(m.Result, &r) != nil || r.ResultType != "input_required" || len(r.InputRequests) != 1 {
					return fmt.Errorf("want the call's input_required answer carrying the sampling request, got %s", l)
				}
				for k := range r.InputRequests {
					key = k
				}
				requestState = r.RequestState
				return nil
			},
			func() error { // its answer
				if !modern {
					if err := send(`{"jsonrpc":"2.0","id":` + sampleID + `,"result":` + sampled + `}`); err != nil {
						return err
					}
				} else {
					answerID = strconv.Itoa(100 + round)
					if err := send(`{"jsonrpc":"2.0","id":` + answerID + `,"method":"tools/call","params":{"name":"alpha:echo","arguments":{},"_meta":{` + meta + `"progressToken":"p"},"inputResponses":{` + strconv.Quote(key) + `:` + sampled + `},"requestState":` + strconv.Quote(requestState) + `}}`); err != nil {
						return err
					}
				}
				<-ch.sampled
				return nil
			},
			func() error { // progress
				ch.progress <- struct{}{}
				m, l, err := read()
				if err != nil || m.Method != "notifications/progress" {
					return fmt.Errorf("want the progress, got %s (%v)", l, err)
				}
				return nil
			},
		}
		// The order a call's life has them in: call, progress, sampling
		// and its answer, then the call's answer.
		for _, i := range []int{0, 4, 2, 3, 1} {
			if err := coverage.ClearCounters(); err != nil {
				return nil, err
			}
			if err := steps[i](); err != nil {
				return nil, fmt.Errorf("%s: %w", legs[i], err)
			}
			if *verbose {
				era := ""
				if modern {
					era = modernPrefix
				}
				fmt.Fprintf(os.Stderr, "%s%s (round %d)\n", era, legs[i], round)
			}
			sub := strconv.Itoa(round*10 + i)
			if modern {
				sub = "modern-" + sub
			}
			files, err := ranFiles(filepath.Join(dir, sub))
			if err != nil {
				return nil, err
			}
			if round == 0 {
				continue
			}
			if seen[legs[i]] == nil {
				seen[legs[i]] = map[string]bool{}
			}
			for _, f := range files {
				seen[legs[i]][f] = true
			}
		}
	}
	out := map[string][]string{}
	for leg, fs := range seen {
		for f := range fs {
			out[leg] = append(out[leg], f)
		}
		slices.Sort(out[leg])
	}
	return out, nil
}

// ranFiles returns the files of aggregator/ whose statements ran since the
// counters were cleared, as paths below aggregator/, written through dir.
func ranFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := coverage.WriteMetaDir(dir); err != nil {
		return nil, err
	}
	if err := coverage.WriteCountersDir(dir); err != nil {
		return nil, err
	}
	profile := filepath.Join(dir, "profile.txt")
	if out, err := exec.Command("go", "tool", "covdata", "textfmt", "-i="+dir, "-o="+profile).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go tool covdata: %w: %s", err, out)
	}
	b, err := os.ReadFile(profile)
	if err != nil {
		return nil, err
	}
	const below = "/aggregator/"
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		// path/file.go:line.col,line.col statements count
		file, rest, ok := strings.Cut(line, ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) != 3 || fields[2] == "0" {
			continue
		}
		if i := strings.Index(file, below); i >= 0 {
			seen[file[i+len(below):]] = true
			if *verbose {
				fmt.Fprintf(os.Stderr, "  ran %s:%s\n", file[i+len(below):], strings.Split(fields[0], ".")[0])
			}
		}
	}
	files := make([]string, 0, len(seen))
	for f := range seen {
		files = append(files, f)
	}
	slices.Sort(files)
	return files, nil
}

// child is an in-process server with one tool, echo. A call to it waits
// for the measure: it sends its progress, then a sampling request, then
// its answer, each when told.
type child struct {
	stdinR, stdoutR          *io.PipeReader
	stdinW, stdoutW          *io.PipeWriter
	done                     chan struct{}
	once                     sync.Once
	called, sampled          chan struct{}
	answer, sample, progress chan struct{}
}

func newChild() *child {
	c := &child{done: make(chan struct{}), called: make(chan struct{}), sampled: make(chan struct{}),
		answer: make(chan struct{}), sample: make(chan struct{}), progress: make(chan struct{})}
	c.stdinR, c.stdinW = io.Pipe()
	c.stdoutR, c.stdoutW = io.Pipe()
	go c.serve()
	return c
}

func (c *child) serve() {
	defer c.Stop()
	in := bufio.NewReader(c.stdinR)
	var mu sync.Mutex
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		c.stdoutW.Write(b)
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		m, err := jsonrpc.Parse(line)
		if err != nil {
			continue
		}
		switch {
		case m.IsNotification():
		case !m.IsRequest(): // the client's answer to its sampling request
			c.sampled <- struct{}{}
		case m.Method == "server/discover": // a legacy server: it knows no such method
			write(jsonrpc.AppendError(nil, m.ID, []byte(`{"code":-32601,"message":"Method not found"}`)))
		case m.Method == "initialize":
			write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"echo","version":"1"}}`)))
		case m.Method == "tools/list":
			write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)))
		case m.Method == "tools/call":
			var p struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			json.Unmarshal(m.Params, &p)
			id := bytes.Clone(m.ID)
			c.called <- struct{}{}
			go func() { // it goes on reading: the client's answer to its request comes meanwhile
				<-c.progress
				write([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(p.Meta.ProgressToken) + `,"progress":1}}` + "\n"))
				<-c.sample
				write([]byte(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}` + "\n"))
				<-c.answer
				write(jsonrpc.AppendResult(nil, id, []byte(`{"content":[{"type":"text","text":"hello"}]}`)))
			}()
		default:
			write(jsonrpc.AppendResult(nil, m.ID, []byte(`{}`)))
		}
	}
}

func (c *child) Stdin() io.WriteCloser { return c.stdinW }
func (c *child) Stdout() io.Reader     { return c.stdoutR }
func (c *child) Done() <-chan struct{} { return c.done }
func (c *child) Err() error            { return nil }
func (c *child) Terminate() error      { return c.Stop() }
func (c *child) Stop() error {
	c.once.Do(func() {
		c.stdinR.Close()
		c.stdoutW.Close()
		close(c.done)
	})
	return nil
}
