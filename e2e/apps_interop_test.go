package e2e

import (
	"testing"
	"time"
)

// appsReport is the part of interop/apps.mjs's JSON report the test reads.
type appsReport struct {
	interopReport
	Seen struct {
		AggregatorInitialize interopInitialize `json:"aggregatorInitialize"`
		AggregatorTool       struct {
			Name string `json:"name"`
			Meta struct {
				UI struct {
					ResourceURI string `json:"resourceUri"`
				} `json:"ui"`
				LegacyResourceURI string `json:"ui/resourceUri"`
			} `json:"_meta"`
		} `json:"aggregatorTool"`
		AggregatorResource struct {
			URI      string `json:"uri"`
			MimeType string `json:"mimeType"`
		} `json:"aggregatorResource"`
		AggregatorCallUnprefixed struct {
			StructuredContent struct {
				Time string `json:"time"`
			} `json:"structuredContent"`
		} `json:"aggregatorCallUnprefixed"`
		ChildInitializeParams interopChildParams `json:"childInitializeParams"`
	} `json:"seen"`
}

// TestInteropMCPAppsExampleServer puts the official MCP Apps example server
// (@modelcontextprotocol/server-basic-vanillajs: tool get-time whose
// _meta.ui.resourceUri names the HTML resource ui://get-time/mcp-app.html)
// behind the aggregator, next to the test server, and has the official SDK
// client (interop/apps.mjs) compare it with a direct connection, both
// declaring the io.modelcontextprotocol/ui extension: the tool entry but its
// name, the ui:// resource entry and its contents, prefixed and unprefixed
// get-time calls (the unprefixed one is how the app's HTML calls its own
// server, relayed by the host), the refusal of other unprefixed names, and
// the extension as the test server's initparams shows the child received it.
func TestInteropMCPAppsExampleServer(t *testing.T) {
	interopSubtests(t, func(t *testing.T, sep string) {
		var rep appsReport
		runComparison(t, "apps.mjs", sep, interopServer(t, "apps", "server-basic-vanillajs", "--stdio"), &rep,
			"connect", "initialize", "tools-list", "resources-list", "resources-read",
			"call-direct", "call-prefixed", "call-unprefixed", "unprefixed-refused", "child-capabilities", "no-client-errors")

		// What the comparisons rest on, checked here too so that a
		// script that compared nothing cannot pass.
		s := rep.Seen
		s.AggregatorInitialize.checkAggregator(t)
		for _, k := range []string{"tools", "resources"} {
			if _, ok := s.AggregatorInitialize.Capabilities[k]; !ok {
				t.Errorf("aggregator capabilities lack %s", k)
			}
		}
		const uri = "ui://get-time/mcp-app.html"
		tool := s.AggregatorTool
		if tool.Name != "apps"+sep+"get-time" || tool.Meta.UI.ResourceURI != uri || tool.Meta.LegacyResourceURI != uri {
			t.Errorf("aggregated tool entry %+v", tool)
		}
		if s.AggregatorResource.URI != uri || s.AggregatorResource.MimeType != "text/html;profile=mcp-app" {
			t.Errorf("aggregated resource entry %+v", s.AggregatorResource)
		}
		if _, err := time.Parse(time.RFC3339Nano, s.AggregatorCallUnprefixed.StructuredContent.Time); err != nil {
			t.Errorf("unprefixed get-time: %v", err)
		}
		ext := s.ChildInitializeParams.Capabilities.Extensions["io.modelcontextprotocol/ui"]
		if want := `{"mimeTypes":["text/html;profile=mcp-app"]}`; !jsonEqual(ext, []byte(want)) {
			t.Errorf("child received the UI extension as %s, the client declared %s", ext, want)
		}
	})
}
