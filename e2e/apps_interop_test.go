package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// appsExampleDir is where npm puts the official MCP Apps example server
// (ext-apps' examples/basic-server-vanillajs), relative to interopDir.
const appsExampleDir = "node_modules/@modelcontextprotocol/server-basic-vanillajs"

// requireAppsExample is requireInterop plus the MCP Apps example server:
// node_modules installed before it joined package.json lack it, and
// requireInterop's marker (server-everything) does not notice, so this runs
// `npm ci` again under the same rules (skip outside CI, fail in CI).
func requireAppsExample(t *testing.T) {
	t.Helper()
	requireInterop(t)
	marker := filepath.Join(interopDir, appsExampleDir, "package.json")
	if _, err := os.Stat(marker); err == nil {
		return
	}
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") == "true" {
			t.Fatalf("MCP Apps example server unavailable in CI: %s", msg)
		}
		t.Skipf("MCP Apps example server unavailable, test skipped: %s", msg)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		unavailable("npm is not installed: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = interopDir
	if out, err := cmd.CombinedOutput(); err != nil {
		unavailable("npm ci in e2e/interop failed: %v\n%s", err, out)
	}
	if _, err := os.Stat(marker); err != nil {
		unavailable("npm ci in e2e/interop did not install %s: %v", appsExampleDir, err)
	}
}

// appsReport is the part of interop/apps.mjs's JSON report the test reads.
type appsReport struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Name  string `json:"name"`
		OK    bool   `json:"ok"`
		MS    int    `json:"ms"`
		Error string `json:"error"`
	} `json:"checks"`
	Failures []string       `json:"failures"`
	Timings  map[string]int `json:"timings"`
	Seen     struct {
		AggregatorInitialize struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
			ServerInfo   struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
		} `json:"aggregatorInitialize"`
		AggregatorTool struct {
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
		ChildInitializeParams struct {
			Capabilities struct {
				Extensions map[string]json.RawMessage `json:"extensions"`
			} `json:"capabilities"`
		} `json:"childInitializeParams"`
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
	requireAppsExample(t)
	for _, sep := range []string{":", "__"} {
		t.Run("separator "+sep, func(t *testing.T) {
			dir, err := filepath.Abs(interopDir)
			if err != nil {
				t.Fatal(err)
			}
			cfg := writeConfig(t,
				server{key: "apps", command: "node", args: []string{filepath.Join(dir, appsExampleDir, "dist", "index.js"), "--stdio"}},
				ts("other"),
			)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "apps.mjs", "--sep", sep, "--key", "apps", "--other-key", "other",
				"--", aggregatorBin, "--config", cfg, "--separator", sep)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), quickRaceExit)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			var compact bytes.Buffer
			if json.Compact(&compact, stdout.Bytes()) != nil {
				compact = stdout
			}
			t.Logf("apps.mjs report: %s", compact.String())
			var rep appsReport
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("apps.mjs (%v) printed no JSON report: %v; stderr:\n%s", runErr, err, stderr.String())
			}
			if runErr != nil || !rep.OK || len(rep.Failures) > 0 {
				t.Fatalf("apps.mjs failed (%v), failures:\n  %s\nstderr:\n%s", runErr, strings.Join(rep.Failures, "\n  "), stderr.String())
			}
			passed := map[string]bool{}
			for _, c := range rep.Checks {
				passed[c.Name] = c.OK
			}
			for _, c := range []string{"connect", "initialize", "tools-list", "resources-list", "resources-read",
				"call-direct", "call-prefixed", "call-unprefixed", "unprefixed-refused", "child-capabilities", "no-client-errors"} {
				if !passed[c] {
					t.Errorf("check %s did not pass", c)
				}
			}

			// What the comparisons rest on, checked here too so that a
			// script that compared nothing cannot pass.
			s := rep.Seen
			if s.AggregatorInitialize.ServerInfo.Name != "mcp-simple-aggregator" {
				t.Errorf("aggregator serverInfo.name %q", s.AggregatorInitialize.ServerInfo.Name)
			}
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
			if want := `{"mimeTypes":["text/html;profile=mcp-app"]}`; !appsJSONEqual(ext, []byte(want)) {
				t.Errorf("child received the UI extension as %s, the client declared %s", ext, want)
			}
			t.Logf("timings (ms): %v", rep.Timings)
		})
	}
}

// appsJSONEqual reports whether a and b are the same JSON value.
func appsJSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
