package capabilities

import "testing"

func TestClientCapabilitiesRelayedToChildren(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{}`},
		// As the client wrote them, byte for byte, unknown keys included.
		{`{ "sampling" : {"tools":{}}, "roots":{"listChanged":true},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"future":[1] }`,
			`{ "sampling" : {"tools":{}}, "roots":{"listChanged":true},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"future":[1] }`},
		{`{"elicitation":{"form":{},"url":{}}}`, `{"elicitation":{"form":{},"url":{}}}`},
		{`{"sampling":{},"tasks":{"list":{}},"x":1}`, `{"sampling":{},"tasks":{"list":{}},"x":1}`},
		{`null`, `{}`},
	} {
		caps := ParseClient([]byte(tc.in))
		if string(caps.Raw()) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, caps.Raw(), tc.want)
		}
	}
	caps := ParseClient([]byte(`{"sampling":{},"roots":null,"experimental":{}}`))
	if !caps.Declared("sampling") || caps.Declared("roots") || caps.Declared("elicitation") {
		t.Errorf("declared: %v", caps.relayed)
	}
}
