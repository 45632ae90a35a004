//go:build race

package jsonrpc

// raceEnabled: the tests run under the race detector.
const raceEnabled = true
