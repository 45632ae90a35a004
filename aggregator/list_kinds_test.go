package aggregator

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
)

// The tables that read listKinds hold each kind: the client's list
// method; a list_changed never reaches the child's notification table
// (the server refreshes that list itself).
func TestListKinds(t *testing.T) {
	for _, k := range listKinds {
		if childNotifications[k.Changed] != nil {
			t.Errorf("%s: the child's notification table handles %s", k.Name, k.Changed)
		}
		if clientMethods[k.Lists[0].Method] == nil {
			t.Errorf("%s: no client method %s", k.Name, k.Lists[0].Method)
		}
	}
}

// A server's tools are announced whatever it declared; its prompts and
// resources only when it declared them; in the order of listKinds.
func TestAnnounceLists(t *testing.T) {
	for _, tt := range []struct {
		caps string
		want []string
	}{
		{`{}`, []string{"notifications/tools/list_changed"}},
		{`{"prompts":{}}`, []string{"notifications/tools/list_changed", "notifications/prompts/list_changed"}},
		{`{"resources":{},"tools":{}}`, []string{"notifications/tools/list_changed", "notifications/resources/list_changed"}},
		{`{"resources":{},"prompts":{}}`, []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"}},
	} {
		var got []string
		announceLists(capabilities.ParseServer([]byte(`{"capabilities":`+tt.caps+`}`)), func(m string) { got = append(got, m) })
		if !slices.Equal(got, tt.want) {
			t.Errorf("caps %s: announced\n%s\nwant\n%s", tt.caps, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

// A listen filter is written back as subscriptions/listen's params in one
// order, whatever the order it was read in: the list changes as listKinds
// has them, then the URIs, each once.
func TestListFilterRoundTrip(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{}`, `{"notifications":{}}`},
		{`{"notifications":{"resourcesListChanged":true,"toolsListChanged":true,"promptsListChanged":false}}`,
			`{"notifications":{"toolsListChanged":true,"resourcesListChanged":true}}`},
		{`{"notifications":{"resourceSubscriptions":["a:\/1","b","a:/1"],"promptsListChanged":true}}`,
			`{"notifications":{"promptsListChanged":true,"resourceSubscriptions":["a:/1","b"]}}`},
		{`{"notifications":{"resourceSubscriptions":["x"]}}`, `{"notifications":{"resourceSubscriptions":["x"]}}`},
	} {
		if got := string(readListFilter([]byte(tt.in)).appendTo(nil)); got != tt.want {
			t.Errorf("%s: written as\n%s\nwant\n%s", tt.in, got, tt.want)
		}
	}
}
