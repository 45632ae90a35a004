package aggregator

import (
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// The one warning of what was done to the names says what, whatever was:
// a key that holds the separator (strict names, a key ending in "_"), or
// names told apart for a client without a limit.
func TestNamesWarningSaysWhat(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		opts   Options
		keys   []string
		tools  map[string]string
		client string
		want   string
	}{
		{"strict, key ending in _", Options{StrictNames: true}, []string{"a_"}, map[string]string{"a_": "x"}, "some-client",
			`warning: tool names made to match ^[a-zA-Z0-9_-]{1,64}$ for client "some-client": 1 with a key that holds the separator; --debug lists them`},
		{"separator __, unknown client", Options{Separator: "__"}, []string{"a", "a_"}, map[string]string{"a": "_x", "a_": "x"}, "some-client",
			`warning: tool names changed for client "some-client": 1 told apart by a hash; --debug lists them`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Start = func(s config.Server) (Process, error) {
				return startFake(toolServer(`{"name":"` + tt.tools[s.Key] + `"}`)), nil
			}
			h := serveOptions(t, tt.opts, tt.keys...)
			listedTools(t, h, tt.client)
			log := h.logged()
			if !strings.Contains(log, tt.want) || strings.Contains(log, "warning: ;") || strings.Contains(log, "the 0 characters") {
				t.Errorf("log:\n%s\nwant %s", log, tt.want)
			}
		})
	}
}
