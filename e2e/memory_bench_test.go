package e2e

// What the start-up benchmarks need of the aggregator's memory (what each
// server declared and listed, kept per server and scope in the cache
// directory): a cache directory of their own, empty (a fresh start) or
// warmed by one real session before (a warm start), never the one TestMain
// shares, where whichever benchmark ran before decides what is remembered.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchInit is the initialize request of every start-up benchmark and of
// the warm-up: what is remembered is recalled only for a client that
// declares the same protocol version and capabilities (the scope), so they
// must not drift apart. The client's name picks its first-list budget only.
func benchInit(client string) request {
	return newRequest("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}`)
}

// startBenchIn is startBench with the aggregator's cache directory
// (XDG_CACHE_HOME) set to cache.
func startBenchIn(tb testing.TB, name, cache string, argv ...string) *benchClient {
	tb.Helper()
	return startBenchEnv(tb, name, []string{"XDG_CACHE_HOME=" + cache}, argv...)
}

// rememberedFiles returns the files the aggregator keeps in cache, one per
// server and scope.
func rememberedFiles(tb testing.TB, cache string) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(cache, "mcp-simple-aggregator", "servers", "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// toolsOf is how many tools the test server lists with args, asked
// directly.
func toolsOf(b *testing.B, args ...string) int {
	b.Helper()
	c := startBench(b, "direct", append([]string{testserverBin}, args...)...)
	defer c.close()
	c.call(benchInit("bench"))
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	return strings.Count(string(c.call(newRequest("tools/list", ""))), `"inputSchema":`)
}

// warmCache returns a new cache directory warmed by one session through
// the aggregator over cfg (servers servers, tools tools in all), as a user's
// session the day before: Codex (which lists once and waits: its first
// list holds every server up within 24 s) initializes as benchInit does,
// lists the tools, gets all of them, closes its stdin and waits for the
// aggregator to exit. It fails the benchmark unless the directory then
// holds what each server declared and listed: a warm case that measured a
// fresh start would be worthless.
func warmCache(b *testing.B, cfg string, servers, tools int) string {
	b.Helper()
	cache := b.TempDir()
	c := startBenchIn(b, "warm-up", cache, aggregatorBin, "--config", cfg)
	c.call(benchInit("codex-mcp-client"))
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	if n := strings.Count(string(c.call(newRequest("tools/list", ""))), `"inputSchema":`); n != tools {
		b.Fatalf("warm-up: the first list has %d tools, want %d: not every server was up\nstderr:\n%s", n, tools, c.stderr)
	}
	c.close()
	files := rememberedFiles(b, cache)
	if len(files) != servers {
		b.Fatalf("after the warm-up, %d files in the cache directory, want one for each of the %d servers: %q\nstderr:\n%s", len(files), servers, files, c.stderr)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(data), `"tools":[{`) {
			b.Fatalf("after the warm-up, %s holds no tools (%v): %.300s", f, err, data)
		}
	}
	return cache
}
