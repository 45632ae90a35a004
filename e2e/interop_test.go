package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestInteropOfficialSDKClientAndReferenceServers drives the aggregator with
// the official TypeScript SDK client over the official reference servers
// server-everything and server-filesystem: listing, calls, error
// passthrough, sampling, elicitation, roots, progress, cancellation,
// resources, prompts, completion, logging and list_changed, each compared
// with a direct connection where that makes sense (see interop/client.mjs).
func TestInteropOfficialSDKClientAndReferenceServers(t *testing.T) {
	interopSubtests(t, func(t *testing.T, sep string) {
		cfg := writeConfig(t,
			interopServer(t, "everything", "server-everything", "stdio"),
			interopServer(t, "fs", "server-filesystem", t.TempDir()),
		)
		run := runInteropScript(t, 4*time.Minute, "client.mjs", cfg, sep, nil,
			"--prefix-everything", "everything"+sep, "--prefix-fs", "fs"+sep)
		out := run.stdout
		summary := regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`).FindStringSubmatch(out)
		if run.err != nil || summary == nil || summary[2] != "0" {
			t.Fatalf("interop run failed (%v); stderr:\n%s", run.err, run.stderr)
		}
		// The cases that prove the relay must have run, not been skipped.
		for _, c := range []string{"list", "call", "errors", "error-data", "fs", "sampling", "elicitation", "roots", "progress", "cancellation", "resources", "subscribe", "prompts", "completion", "logging", "roots-list-changed", "shutdown"} {
			if !strings.Contains(out, "\nok "+c+"\n") && !strings.HasPrefix(out, "ok "+c+"\n") {
				t.Errorf("case %s did not pass", c)
			}
		}
	})
}
