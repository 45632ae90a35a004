package eras

import (
	"testing"
	"time"
)

func TestLegacyResult(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"content":[],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m"}}}`, `{"content":[]}`},
		{`{"resultType":"complete","content":[1], "_meta":{"k":1,"io.modelcontextprotocol/serverInfo":{}},"ttlMs":5,"cacheScope":"public"}`, `{"content":[1], "_meta":{"k":1}}`},
		{`{ "resultType" : "complete" }`, `{ }`},
		{`{"content":[]}`, `{"content":[]}`},                                                         // no resultType: as it is
		{`{"resultType":"complete","ttlMs":5,"text":"ttlMs <\u0026>"}`, `{"text":"ttlMs <\u0026>"}`}, // escapes kept
	}
	for _, c := range cases {
		if got := string(LegacyResult([]byte(c.in))); got != c.want {
			t.Errorf("LegacyResult(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestWithResultType(t *testing.T) {
	cases := []struct {
		in        string
		cacheable bool
		want      string
	}{
		{`{"content":[]}`, false, `{"resultType":"complete","content":[]}`},
		{`{}`, false, `{"resultType":"complete"}`},
		{`{ "a" : 1 }`, false, `{"resultType":"complete","a" : 1}`},
		{`{"contents":[]}`, true, `{"resultType":"complete","contents":[],"ttlMs":0,"cacheScope":"private"}`},
		{`{"contents":[],"ttlMs":9}`, true, `{"resultType":"complete","contents":[],"ttlMs":9}`}, // its own hint kept
		{`{"resultType":"input_required"}`, false, `{"resultType":"input_required"}`},            // has one: as it is
		{`[1]`, false, `[1]`}, // not an object: as it is
		{``, false, ``},
	}
	for _, c := range cases {
		if got := string(WithResultType([]byte(c.in), c.cacheable)); got != c.want {
			t.Errorf("WithResultType(%s, %t) = %s, want %s", c.in, c.cacheable, got, c.want)
		}
	}
}

func TestModernResult(t *testing.T) {
	got := string(ModernResult([]byte(`{"tools":[]}`), Hint{TTL: 1500 * time.Millisecond, Public: true}, []byte(`{"name":"agg"}`)))
	want := `{"resultType":"complete","tools":[],"ttlMs":1500,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"agg"}}}`
	if got != want {
		t.Errorf("ModernResult = %s\nwant %s", got, want)
	}
	if got := string(ModernResult([]byte(`{}`), Hint{}, []byte(`{}`))); got != `{"resultType":"complete","ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{}}}` {
		t.Errorf("ModernResult of {} = %s", got)
	}
}

func TestModernError(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"code":-32002,"message":"Resource not found","data":{"uri":"x"}}`, `{"code":-32602,"message":"Resource not found","data":{"uri":"x"}}`},
		{`{"code":-32601,"message":"Method not found"}`, `{"code":-32601,"message":"Method not found"}`},
		{`{"message":"no code"}`, `{"message":"no code"}`},
	}
	for _, c := range cases {
		if got := string(ModernError([]byte(c.in))); got != c.want {
			t.Errorf("ModernError(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestIsInputRequired(t *testing.T) {
	cases := map[string]bool{
		`{"resultType":"input_required","inputRequests":{}}`: true,
		`{"resultType":"complete"}`:                          false,
		`{"content":[]}`:                                     false,
		`{"resultType":1}`:                                   false,
	}
	for in, want := range cases {
		if got := IsInputRequired([]byte(in)); got != want {
			t.Errorf("IsInputRequired(%s) = %t, want %t", in, got, want)
		}
	}
}

func TestRemoveMembers(t *testing.T) {
	drop := func(k string) bool { return k == "x" }
	cases := []struct{ in, want string }{
		{`{"x":1,"y":2}`, `{"y":2}`},
		{`{"y":2,"x":1}`, `{"y":2}`},
		{`{"y":2, "x":{"x":1}, "z":[3]}`, `{"y":2, "z":[3]}`},
		{`{"x":1}`, `{}`},
		{`{}`, `{}`},
	}
	for _, c := range cases {
		if got := string(RemoveMembers([]byte(c.in), drop)); got != c.want {
			t.Errorf("RemoveMembers(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
