package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"testing"
)

// directToolsList runs the test server alone and returns its raw tools/list
// result, as a direct client would see it.
func directToolsList(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(testserverBin, args...)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatalf("testserver: %v", err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	br := bufio.NewReader(stdout)
	for {
		line, err := br.ReadBytes('\n')
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":2,`)) {
			var m struct{ Result json.RawMessage }
			json.Unmarshal(line, &m)
			return m.Result
		}
		if err != nil {
			t.Fatalf("no tools/list answer from the test server: %v", err)
		}
	}
}

func TestToolsListPrefixesNamesInConfigOrderAndKeepsEveryOtherByte(t *testing.T) {
	s := startConfig(t, []server{ts("zeta", "-tools", "2"), ts("alpha")})
	s.initialize("2025-11-25", "{}")
	got := s.result("tools/list", "")

	names := toolNames(t, got)
	direct := toolNames(t, directToolsList(t, "-tools", "2"))
	var want []string
	for _, n := range direct {
		want = append(want, "zeta:"+n)
	}
	for _, n := range toolNames(t, directToolsList(t)) {
		want = append(want, "alpha:"+n)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("tool names:\n got %v\nwant %v", names, want)
	}

	// Every byte of every tool but its name is the child's: build the
	// expected result from the child's own bytes.
	raw := directToolsList(t, "-name", "zeta", "-tools", "2")
	wantBytes := bytes.ReplaceAll(raw, []byte(`"name":"`), []byte(`"name":"zeta:`))
	if !bytes.Contains(got, wantBytes[len(`{"tools":[`):len(wantBytes)-2]) {
		t.Fatalf("tools of zeta are not byte-identical to the child's:\n got %s\nwant %s", clip(got), clip(wantBytes))
	}
	if !bytes.Contains(got, []byte("echo <input> & return it — ünïcode")) {
		t.Fatalf("description was re-encoded: %s", clip(got))
	}
}

func TestToolsCallPassesArgumentsAndResultsByteForByte(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	args := `{ "b" : [1, 2.50, "<&>"],  "a":{"\u00e9":null} }`
	m := s.call("tools/call", `{"name":"alpha:echo","arguments":`+args+`}`)
	want := `"structuredContent":` + args + `}`
	if !bytes.HasSuffix(m.line, []byte(want+"}")) {
		t.Fatalf("result not byte-identical:\n got %s\nwant suffix %s}", m.line, want)
	}
	e := s.call("tools/call", `{"name":"alpha:fail"}`)
	wantErr := `"error":{"code":-32042,"message":"custom failure","data":{"why":"asked to fail <&>"}}}`
	if !bytes.HasSuffix(e.line, []byte(wantErr)) {
		t.Fatalf("error not byte-identical:\n got %s\nwant suffix %s", e.line, wantErr)
	}
	r := s.call("tools/call", `{"name":"alpha:iserror"}`)
	if !bytes.Contains(r.line, []byte(`"result":{"content":[{"type":"text","text":"tool error"}],"isError":true}`)) {
		t.Fatalf("isError result changed: %s", r.line)
	}
	// String ids come back as the same bytes.
	s.send(`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"alpha:echo","arguments":{}}}`)
	if m := s.response(`"abc"`); m.Error != nil {
		t.Fatalf("string id: %s", m.line)
	}
}

func TestToolsCallErrors(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	for _, tc := range []struct {
		name    string
		code    int
		message string
	}{
		{"echo", -32602, "Tool name must be prefixed with server key: echo"},
		{"alpha:nope", -32601, "Tool not found: alpha:nope"},
		{"beta:echo", -32601, "Tool not found: beta:echo"},
	} {
		m := s.call("tools/call", fmt.Sprintf(`{"name":%q}`, tc.name))
		code, message := m.errorCode()
		if code != tc.code || message != tc.message {
			t.Errorf("%s: got %d %q, want %d %q", tc.name, code, message, tc.code, tc.message)
		}
	}
}
