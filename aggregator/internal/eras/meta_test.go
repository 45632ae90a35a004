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
