package aggregator

import (
	"fmt"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/shape"
)

// BenchmarkShapeCheck: the check of 1,000 tool entries of a typical shape
// (a description, an input schema of three properties, annotations), as
// the aggregator makes it once per fetch of a server's tools/list
// (shape.Entry); a client's tools/list never pays it.
func BenchmarkShapeCheck(b *testing.B) {
	entries := make([][]byte, 1000)
	size := 0
	for i := range entries {
		entries[i] = []byte(fmt.Sprintf(`{"name":"tool_%d","title":"Tool %d","description":"Does thing %d with the repository, the issue and the branch it is given, and answers with what it did.",`+
			`"inputSchema":{"type":"object","properties":{"owner":{"type":"string","description":"the owner"},"repo":{"type":"string","description":"the repository"},"n":{"type":"number"}},"required":["owner","repo"]},`+
			`"annotations":{"readOnlyHint":true,"openWorldHint":false}}`, i, i, i))
		size += len(entries[i])
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, e := range entries {
			if p := shape.Entry("tools/list", e); p != "" {
				b.Fatal(p)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/1000-tools")
}
