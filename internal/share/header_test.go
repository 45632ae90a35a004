package share

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

func TestEntryKey(t *testing.T) {
	base := Header{Command: "npx", Args: []string{"-y", "srv"}, Dir: "/p", KeyEnv: []string{"TOKEN=a"}, Env: []string{"HOME=/h", "TOKEN=a"}}
	same := base
	same.Env = []string{"HOME=/other", "TOKEN=a"} // the inherited environment is not keyed
	same.Key, same.Pid, same.IdleMs = "other", 7, 1
	if base.EntryKey() != same.EntryKey() {
		t.Error("headers differing only in inherited env, key, pid or idle have different keys")
	}
	for name, h := range map[string]Header{
		"command":   {Command: "npy", Args: base.Args, Dir: base.Dir, KeyEnv: base.KeyEnv},
		"args":      {Command: "npx", Args: []string{"-y srv"}, Dir: base.Dir, KeyEnv: base.KeyEnv},
		"args join": {Command: "npx", Args: []string{"-y", "sr", "v"}, Dir: base.Dir, KeyEnv: base.KeyEnv},
		"dir":       {Command: "npx", Args: base.Args, Dir: "/q", KeyEnv: base.KeyEnv},
		"env value": {Command: "npx", Args: base.Args, Dir: base.Dir, KeyEnv: []string{"TOKEN=b"}},
		"env none":  {Command: "npx", Args: base.Args, Dir: base.Dir},
	} {
		if h.EntryKey() == base.EntryKey() {
			t.Errorf("%s differs, key is the same", name)
		}
	}
	if k := base.EntryKey(); strings.Contains(k, "TOKEN") || len(k) != 32 {
		t.Errorf("key %q: want 32 hex digits", k)
	}
}

func TestHeaderLineRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	h := Header{V: HeaderVersion, Key: "k", Command: "c", Args: []string{"a"}, IdleMs: 2000, Pid: 3}
	if err := writeLine(&buf, h); err != nil {
		t.Fatal(err)
	}
	buf.WriteString(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	r := bufio.NewReader(&buf)
	var got Header
	if err := readLine(r, &got); err != nil {
		t.Fatal(err)
	}
	if got.Command != "c" || got.Idle().Seconds() != 2 || got.Pid != 3 {
		t.Errorf("got %+v", got)
	}
	rest, _ := r.ReadString('\n')
	if rest != `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n" {
		t.Errorf("the line after the header: %q", rest)
	}
	long := bufio.NewReader(strings.NewReader(`"` + strings.Repeat("x", maxHeader+10) + "\"\n"))
	if err := readLine(long, new(string)); err != errLongHeader {
		t.Errorf("long header: %v", err)
	}
}
