package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkToolsList10x100Filtered is BenchmarkToolsList10x100 with a
// filter on every server: each offers 10 tools more, which its entry's
// excludeTools hides, so that the list served is the same 1,190 tools,
// byte for byte. Filters apply when the list is built, not when it is
// served: compare the two.
func BenchmarkToolsList10x100Filtered(b *testing.B) {
	skipUnderRace(b)
	var denied []string
	for i := 100; i < 110; i++ {
		denied = append(denied, fmt.Sprintf("t%d", i))
	}
	deny, _ := json.Marshal(denied)
	var servers []server
	for i := 0; i < 10; i++ {
		s := ts(fmt.Sprintf("s%d", i), "-tools", "110")
		s.extra = fmt.Sprintf(`"excludeTools": %s`, deny)
		servers = append(servers, s)
	}
	toolsListBench(b, writeConfig(b, servers...))
}
