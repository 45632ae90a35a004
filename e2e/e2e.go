// Package e2e holds the end-to-end tests of mcp-simple-aggregator: they build
// the real binary and drive it over stdio as an MCP client would, with the
// scriptable test server (e2e/testserver) and, in the interop tests, the
// official reference servers as its children. The benchmarks compare a
// direct connection, a bare byte relay (e2e/relay) and the aggregator.
package e2e
