package aggregator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// BenchmarkRebuildFiltered measures the rebuild of the registry (where
// filters apply) and tools/list over 10 servers that list 100 tools each:
// without filters, and with a filter on every server, which offers 110
// tools, hides 10 and renames 5.
func BenchmarkRebuildFiltered(b *testing.B) {
	var tools, denied []string
	for i := 0; i < 110; i++ {
		tools = append(tools, fmt.Sprintf("tool_%d", i))
	}
	for i := 100; i < 110; i++ {
		denied = append(denied, fmt.Sprintf("tool_%d", i))
	}
	deny, _ := json.Marshal(denied)
	filters := map[string]string{
		"plain":    `"excludeTools": null`,
		"filtered": `"excludeTools": ` + string(deny) + `, "exposedTools": [{"original": "tool_0", "exposed": "zero"}, {"original": "tool_1", "exposed": "one"}, {"original": "tool_2", "exposed": "two"}, {"original": "tool_3", "exposed": "three"}, {"original": "tool_4", "exposed": "four"}, ` + strings.Trim(mustJSON(tools[5:]), "[]") + `]`,
	}
	for _, way := range []string{"plain", "filtered"} {
		offered := tools
		if way == "plain" {
			offered = tools[:100]
		}
		var entries []config.Server
		for i := 0; i < 10; i++ {
			entries = append(entries, filtered(b, fmt.Sprintf("s%d", i), filters[way], offered...))
		}
		f := &toolFleet{}
		h := filterHarness(b, f, Options{}, entries...)
		b.Run(way+"/rebuild", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				h.a.catalog.rebuild()
			}
		})
		b.Run(way+"/tools-list", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			}
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
