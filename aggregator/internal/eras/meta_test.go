package eras

import "testing"

func TestWithMeta(t *testing.T) {
	meta := `{"a":1,"b":2}`
	cases := []struct{ in, want string }{
		{``, `{"_meta":{"a":1,"b":2}}`},
		{`{}`, `{"_meta":{"a":1,"b":2}}`},
		{`{"name":"t"}`, `{"name":"t","_meta":{"a":1,"b":2}}`},
		{`{"name":"t","_meta":{"b":"mine","progressToken":7}}`, `{"name":"t","_meta":{"b":"mine","progressToken":7,"a":1}}`}, // its own members kept
		{`{"_meta":null}`, `{"_meta":{"a":1,"b":2}}`},
	}
	for _, c := range cases {
		if got := string(WithMeta([]byte(c.in), []byte(meta))); got != c.want {
			t.Errorf("WithMeta(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// EditMeta hands edit the _meta object (nil for none, or one that is not
// an object) and keeps every other byte; nil from edit leaves msg as it is.
func TestEditMeta(t *testing.T) {
	mark := func(meta []byte) []byte {
		if meta == nil {
			return []byte(`{"new":1}`)
		}
		return []byte(`{"was":` + string(meta) + `}`)
	}
	cases := []struct{ in, want string }{
		{``, `{"_meta":{"new":1}}`},
		{`{ }`, `{"_meta":{"new":1}}`},
		{`{"b" : "<&>" }`, `{"b" : "<&>" ,"_meta":{"new":1}}`},
		{`{"_meta" : { "x":1 } , "b":2}`, `{"_meta" : {"was":{ "x":1 }} , "b":2}`},
		{`{"_meta":[1],"b":2}`, `{"_meta":{"new":1},"b":2}`},
		{`[1]`, `[1]`},
		{`"s"`, `"s"`},
	}
	for _, c := range cases {
		if got := string(EditMeta([]byte(c.in), mark)); got != c.want {
			t.Errorf("EditMeta(%s) = %s, want %s", c.in, got, c.want)
		}
		if got := string(EditMeta([]byte(c.in), func([]byte) []byte { return nil })); got != c.in {
			t.Errorf("EditMeta(%s) with no edit = %s", c.in, got)
		}
	}
}

func TestRequestMeta(t *testing.T) {
	got := string(RequestMeta([]byte(`{"sampling":{}}`), []byte(`{"name":"c","version":"1"}`), "info"))
	want := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info"}`
	if got != want {
		t.Errorf("RequestMeta = %s\nwant %s", got, want)
	}
	if got := string(RequestMeta([]byte(`{}`), []byte(`{}`), "")); got != `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{}}` {
		t.Errorf("RequestMeta without a level = %s", got)
	}
}

func TestSubscriptionID(t *testing.T) {
	cases := map[string]string{
		`{"uri":"u","_meta":{"io.modelcontextprotocol/subscriptionId":"s1"}}`: `"s1"`,
		`{"uri":"u","_meta":{"io.modelcontextprotocol/subscriptionId":7}}`:    `7`,
		`{"uri":"u"}`: ``,
	}
	for in, want := range cases {
		if got := string(SubscriptionID([]byte(in))); got != want {
			t.Errorf("SubscriptionID(%s) = %s, want %s", in, got, want)
		}
	}
}
