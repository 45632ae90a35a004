package aggregator

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

var update = flag.Bool("update", false, "rewrite the expected lines of testdata/*.jsonl with what the aggregator sent")

// TestTranscripts drives the aggregator over pipes, as its client, through
// the transcripts in testdata/*.jsonl, against two children, alpha and
// beta, made by transcriptChild; or, when its first line is
// "# children: KEY=KIND ...", against those children, of those kinds
// (eraChild: legacy, tasks or modern). A transcript is a list of steps:
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
// placeholders: write "< ?" once per line it should read). The
// aggregator's requestStates, random, are written with their prefix and
// $1, $2, ... in the order they first came, in its lines and the client's.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
			t.Parallel()
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
	keys, start := transcriptChildren(t, file)
	h := serve(t, ":", start, keys...)
	var tokens inputTokens
	closed := false
	for i := range steps {
		s := &steps[i]
		if s.send == "EOF" {
			h.closeInput()
			closed = true
			got := h.rest()
			for j := range got {
				got[j] = tokens.hide(got[j])
			}
			sort.Strings(got)
			if !*update && !equalLines(got, s.expect) {
				t.Fatalf("%s: after > EOF:\n got %s\nwant %s", file, strings.Join(got, "\n    "), strings.Join(s.expect, "\n     "))
			}
			s.expect = got
			continue
		}
		h.send(tokens.show(s.send))
		for j, want := range s.expect {
			got := tokens.hide(h.read())
			if !*update && got != want {
				t.Fatalf("%s: after > %s\nline %d:\n got %s\nwant %s", file, s.send, j+1, got, want)
			}
			s.expect[j] = got
		}
	}
	if !closed {
		h.closeInput()
		if extra := h.rest(); len(extra) > 0 && !*update {
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
