package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var hostileNames = []string{"pid", "closeout", "flood", "samplemany", "slowline"}

func TestHostileToolsOnlyWithTheFlag(t *testing.T) {
	t.Parallel()
	p := start(t)
	p.handshake()
	_, m := p.request("1", "tools/list", "")
	if names, _ := toolNames(t, m); strings.Join(names, ",") != strings.Join(builtinNames, ",") {
		t.Errorf("tools without -hostile: %v", names)
	}
	if _, m := p.callTool("2", "pid", `{}`); errorCode(t, m) != -32602 {
		t.Errorf("pid without -hostile: %s", m.Result)
	}

	p = start(t, "-hostile", "-tools", "1")
	p.handshake()
	_, m = p.request("1", "tools/list", "")
	want := append(append(append([]string{}, builtinNames...), hostileNames...), "t0")
	if names, _ := toolNames(t, m); strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("tools with -hostile: %v, want %v", names, want)
	}
}

func TestHostilePid(t *testing.T) {
	t.Parallel()
	p := start(t, "-hostile")
	p.handshake()
	_, m := p.callTool("1", "pid", `{}`)
	if s, _ := toolText(t, m); s != strconv.Itoa(p.cmd.Process.Pid) {
		t.Errorf("pid answered %q, process is %d", s, p.cmd.Process.Pid)
	}
}

func TestHostileCloseOut(t *testing.T) {
	t.Parallel()
	p := start(t, "-hostile")
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"closeout"}}`)
	select {
	case line, ok := <-p.lines:
		if ok {
			t.Fatalf("a line after closeout: %s", line)
		}
	case <-time.After(waitFor):
		t.Fatal("stdout still open after closeout")
	}
	p.waitStderr("closed stdout")
	// It lives on, reading: requests are still read (and their answers lost).
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"log","arguments":{"text":"still here"}}}`)
	select {
	case <-p.done:
		t.Fatalf("exited after closeout: %v", p.err)
	default:
	}
	if code := p.exitCode(); code != 0 {
		t.Errorf("exit status %d after stdin EOF, want 0; stderr:\n%s", code, p.stderr.String())
	}
}

func TestHostileFlood(t *testing.T) {
	t.Parallel()
	p := start(t, "-hostile")
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood","arguments":{"ms":60000},"_meta":{"progressToken":"tok"}}}`)
	messages, progress := 0, 0
	count := func(line []byte) {
		m := decode(t, line)
		switch m.Method {
		case "notifications/message":
			messages++
			if len(line) < 90 || len(line) > 130 {
				t.Errorf("flood line of %d bytes: %s", len(line), line)
			}
		case "notifications/progress":
			progress++
			if !bytes.Contains(line, []byte(`"progressToken":"tok"`)) {
				t.Errorf("progress without the call's token: %s", line)
			}
		default:
			t.Errorf("unexpected line during the flood: %s", line)
		}
	}
	for messages < 500 {
		count(p.next())
	}
	// Cancelled, it stops; the ping read after the cancel is answered.
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	p.until(func(line []byte, m *message) bool {
		if m.Method == "" && string(m.ID) == "2" {
			return true
		}
		count(line)
		return false
	})
	p.waitStderr("flood cancelled after")
	if progress < messages-1 {
		t.Errorf("%d messages but %d progress notifications", messages, progress)
	}
	for _, l := range p.seen {
		if m := decode(t, l); m.Method == "" {
			t.Errorf("the cancelled flood was answered: %s", l)
		}
	}

	// Without a token, no progress; after ms, "done". (A ping first: what
	// the cancelled flood wrote before it stopped comes before its answer.)
	p.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	p.until(func(_ []byte, m *message) bool { return m.Method == "" && string(m.ID) == "9" })
	p.seen = nil
	_, m := p.callTool("3", "flood", `{"ms":20}`)
	if s, _ := toolText(t, m); s != "done" {
		t.Errorf("flood answered %s", m.Result)
	}
	if len(p.seen) == 0 {
		t.Error("flood of 20 ms sent nothing")
	}
	for _, l := range p.seen {
		if m := decode(t, l); m.Method != "notifications/message" {
			t.Errorf("flood without a token sent %s", l)
		}
	}
}

func TestHostileSampleMany(t *testing.T) {
	t.Parallel()
	p := start(t, "-hostile")
	p.handshake()
	const n = 50
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"samplemany","arguments":{"n":50}}}`)
	// All n are sent at once, before any is answered.
	var ids []string
	for len(ids) < n {
		_, m := p.until(func(_ []byte, m *message) bool { return m.Method == "sampling/createMessage" })
		ids = append(ids, string(m.ID))
	}
	for i := len(ids) - 1; i >= 0; i-- { // answered in reverse order
		p.send(`{"jsonrpc":"2.0","id":` + ids[i] + `,"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}`)
	}
	if _, m := p.response("1"); func() string { s, _ := toolText(t, m); return s }() != fmt.Sprint(n) {
		t.Errorf("samplemany answered %s", m.Result)
	}
}

func TestHostileSlowLine(t *testing.T) {
	t.Parallel()
	p := start(t, "-hostile")
	p.handshake()
	const n = 300 << 10 // 5 pieces
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slowline","arguments":{"bytes":%d,"pause":20}}}`, n))
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	// Both answers arrive whole, whichever comes first: no line is cut.
	for got := map[string]bool{}; len(got) < 2; {
		m := decode(t, p.next())
		got[string(m.ID)] = true
		s, _ := toolText(t, m)
		switch string(m.ID) {
		case "1":
			if len(s) != n || strings.Trim(s, "x") != "" {
				t.Errorf("slowline answered %d bytes", len(s))
			}
		case "2":
			if s != "{}" {
				t.Errorf("echo answered %q", s)
			}
		default:
			t.Fatalf("unexpected answer id %s", m.ID)
		}
	}
}

func TestHostileExitOnDiscover(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "discovered")
	p := start(t, "-exit-on-discover", file)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`)
	p.waitStderr("server/discover: exiting")
	if code := p.exitCode(); code != 1 {
		t.Errorf("exit status %d on server/discover, want 1", code)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the file was not created: %v", err)
	}
	// Started again, it answers as a legacy server.
	p = start(t, "-exit-on-discover", file)
	if _, m := p.request("1", "server/discover", `{}`); errorCode(t, m) != -32601 {
		t.Errorf("server/discover the second time: %s", m.Error)
	}
	p.handshake()
	p.callTool("2", "echo", `{}`)
}
