package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestInteropMalformedShapes runs the official TypeScript SDK client over a
// server whose lists hold entries the MCP schema refuses and whose answers
// are malformed (the test server with -malformed), directly and through
// the aggregator (interop/shape.mjs): directly each list fails whole; through
// the aggregator every list holds every good entry of both servers, and
// every malformed answer is an error naming the server at once, where the
// SDK would drop it and wait for its timeout.
func TestInteropMalformedShapes(t *testing.T) {
	interopSubtests(t, func(t *testing.T, sep string) {
		cfg := writeConfig(t, ts("bad", "-malformed", "-caps", "prompts,resources"), ts("good", "-caps", "prompts,resources"))
		run := runInteropScript(t, 2*time.Minute, "shape.mjs", cfg, sep, nil, "--direct", testserverBin)
		summary := regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`).FindStringSubmatch(run.stdout)
		if run.err != nil || summary == nil || summary[2] != "0" || summary[1] != "9" {
			t.Fatalf("shape.mjs failed (%v); stderr:\n%s", run.err, run.stderr)
		}
		if strings.Count(run.stdout, "the whole list failed") != 4 {
			t.Errorf("directly, not every list failed whole:\n%s", run.stdout)
		}
	})
}
