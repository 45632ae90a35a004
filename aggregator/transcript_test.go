package aggregator

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

var update = flag.Bool("update", false, "rewrite the expected lines of testdata/*.jsonl with what the aggregator sent")

// TestTranscripts drives the aggregator over pipes, as its client, through
// the transcripts in testdata/*.jsonl, against the children of
// transcriptChildren. A transcript is a list of steps:
//
//	# a comment
//	> LINE    the client sends LINE
//	< LINE    the aggregator's next line is LINE, byte for byte
//	> EOF     the client closes its input
//
// After each step that sends, the test reads as many lines as the < lines
// that follow it; after > EOF, every line up to the end of the output, in
// any order (the children stop in parallel), kept sorted in the file. At
// the end the output must have ended (the input is closed first if the
// transcript did not). With -update, the < lines of each step are
// rewritten with what the aggregator sent (a new step gets its lines from
// placeholders: write "< ?" once per line it should read).
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
			runTranscript(t, file)
		})
	}
}

// step is one client line (or EOF) and the lines it is answered with.
type step struct {
	comments []string // the lines before it
	send     string
	expect   []string
}

func readTranscript(t *testing.T, file string) (steps []step, trailer []string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var comments []string
	for i, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "> "):
			steps = append(steps, step{comments: comments, send: line[2:]})
			comments = nil
		case strings.HasPrefix(line, "< ") && len(steps) > 0:
			steps[len(steps)-1].expect = append(steps[len(steps)-1].expect, line[2:])
		case line == "" || strings.HasPrefix(line, "#"):
			comments = append(comments, line)
		default:
			t.Fatalf("%s:%d: a line must start with \"> \", \"< \" or \"#\": %q", file, i+1, line)
		}
	}
	return steps, comments
}

func runTranscript(t *testing.T, file string) {
	steps, trailer := readTranscript(t, file)
	in, out := serveTranscriptChildren(t)
	closed := false
	for i := range steps {
		s := &steps[i]
		if s.send == "EOF" {
			in.Close()
			closed = true
			got := out.rest(t)
			sort.Strings(got)
			if !*update && !equalLines(got, s.expect) {
				t.Fatalf("%s: after > EOF:\n got %s\nwant %s", file, strings.Join(got, "\n    "), strings.Join(s.expect, "\n     "))
			}
			s.expect = got
			continue
		}
		if _, err := io.WriteString(in, s.send+"\n"); err != nil {
			t.Fatalf("%s: sending %s: %v", file, s.send, err)
		}
		for j, want := range s.expect {
			got := out.line(t)
			if !*update && got != want {
				t.Fatalf("%s: after > %s\nline %d:\n got %s\nwant %s", file, s.send, j+1, got, want)
			}
			s.expect[j] = got
		}
	}
	if !closed {
		in.Close()
		if extra := out.rest(t); len(extra) > 0 && !*update {
			t.Fatalf("%s: lines after the last step: %s", file, strings.Join(extra, "\n"))
		}
	}
	if *update {
		writeTranscript(t, file, steps, trailer)
	}
}

func equalLines(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

func writeTranscript(t *testing.T, file string, steps []step, trailer []string) {
	var b bytes.Buffer
	for _, s := range steps {
		for _, c := range s.comments {
			b.WriteString(c + "\n")
		}
		b.WriteString("> " + s.send + "\n")
		for _, e := range s.expect {
			b.WriteString("< " + e + "\n")
		}
	}
	for _, c := range trailer {
		b.WriteString(c + "\n")
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// transcriptOutput reads the aggregator's output line by line, with a
// deadlock watchdog.
type transcriptOutput struct {
	lines chan string
	ended chan struct{}
}

func (o *transcriptOutput) line(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-o.lines:
		if !ok {
			t.Fatal("the output ended")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no line from the aggregator within 10 s")
	}
	return ""
}

// rest reads every line up to the end of the output.
func (o *transcriptOutput) rest(t *testing.T) []string {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-o.lines:
			if !ok {
				return got
			}
			got = append(got, l)
		case <-timeout:
			t.Fatal("the output did not end within 10 s")
		}
	}
}

// serveTranscriptChildren runs an aggregator over transcriptChildren and
// returns the client's input and output.
func serveTranscriptChildren(t *testing.T) (io.WriteCloser, *transcriptOutput) {
	var servers []config.Server
	for _, k := range []string{"alpha", "beta"} {
		servers = append(servers, config.Server{Key: k, Command: "fake"})
	}
	a := New(Options{
		Name: "agg", Version: "test", Separator: ":", Servers: servers,
		Start: func(s config.Server) (Process, error) {
			return startFake(transcriptChild(s.Key)), nil
		},
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- a.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	out := &transcriptOutput{lines: make(chan string, 100)}
	go func() {
		defer close(out.lines)
		br := bufio.NewReader(outR)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			out.lines <- strings.TrimSuffix(l, "\n")
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		select {
		case err := <-served:
			if err != nil && !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after its input closed")
		}
	})
	return inW, out
}

// transcriptChild is a scripted child named key: tools echo (answers with
// its arguments) and hang (never answers), prompt greet, resource
// x://KEY/a, and logging.
func transcriptChild(key string) func(string, []byte) string {
	return func(method string, params []byte) string {
		switch method {
		case "initialize":
			return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{},"logging":{}},"serverInfo":{"name":"` + key + `","version":"1"}}`
		case "tools/list":
			return `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"hang","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			name, _ := jsonrpc.StringMember(params, "name")
			if name == "hang" {
				return ""
			}
			args, _ := jsonrpc.Member(params, "arguments")
			return `{"content":[{"type":"text","text":` + string(jsonrpc.AppendString(nil, key+" "+string(args))) + `}]}`
		case "prompts/list":
			return `{"prompts":[{"name":"greet"}]}`
		case "prompts/get":
			return `{"messages":[]}`
		case "resources/list":
			return `{"resources":[{"uri":"x://` + key + `/a","name":"a"}]}`
		case "resources/templates/list":
			return `{"resourceTemplates":[]}`
		case "resources/read":
			uri, _ := jsonrpc.Member(params, "uri")
			return `{"contents":[{"uri":` + string(uri) + `,"text":"` + key + `"}]}`
		}
		return `{}`
	}
}
