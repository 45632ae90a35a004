package aggregator

import (
	"testing"
)

// BenchmarkToolsCall measures one tools/call through the aggregator to an
// in-process child over io.Pipe, sequentially: the aggregator's own cost
// per call (allocations above all); the e2e benchmarks measure the
// latency over real pipes.
func BenchmarkToolsCall(b *testing.B) {
	exchange := serveFakes(b, ":", echoFake, "alpha").exchange
	exchange(initLine)
	exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	line := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha:echo","arguments":{"text":"hello"}}}`
	want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hello"}]}}`
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := exchange(line); got != want {
			b.Fatalf("got %s", got)
		}
	}
}

// echoFake is a child with one tool, echo, that answers every call at once.
var echoFake = map[string]func(string, []byte) string{
	"alpha": func(method string, params []byte) string {
		if method == "tools/call" {
			return `{"content":[{"type":"text","text":"hello"}]}`
		}
		return toolServer(`{"name":"echo","inputSchema":{"type":"object"}}`)(method, params)
	},
}
