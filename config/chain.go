package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// ChainEnv is the environment variable through which an aggregator tells
// every process it starts which configs the aggregators above it serve, so
// that an aggregator started, directly or through other programs, on a
// config already served up the chain refuses to start instead of starting
// aggregators without end.
const ChainEnv = "MCP_SIMPLE_AGGREGATOR_CHAIN"

// MaxNesting is the deepest chain of aggregators started by one another.
const MaxNesting = 8

// Link is one aggregator of a chain: the config it serves, as it was
// given (made absolute), and that file's identity, which two spellings of
// one file share (a symlink, "a/../b").
type Link struct {
	Config string `json:"config"`
	ID     string `json:"id"`
}

// Chain is the aggregators above this one, the topmost first.
type Chain []Link

// ChainFrom reads the chain from the value of ChainEnv; an empty value is
// the empty chain.
func ChainFrom(value string) (Chain, error) {
	if value == "" {
		return nil, nil
	}
	var c Chain
	if err := json.Unmarshal([]byte(value), &c); err != nil {
		return nil, fmt.Errorf("environment variable %s: not a chain of aggregators: %w", ChainEnv, err)
	}
	return c, nil
}

// Join returns the chain with this aggregator, serving the config at path,
// at its end. It refuses when an aggregator up the chain serves the same
// file (however spelled), or when the chain would be more than MaxNesting
// deep; the error names the config and the chain.
func (c Chain) Join(path string) (Chain, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	id, err := fileID(abs)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	joined := append(c[:len(c):len(c)], Link{Config: abs, ID: id})
	for _, l := range c {
		if l.ID == id {
			return nil, fmt.Errorf("refusing to serve config %s: an aggregator up the chain serves it already (%s); a config that starts the aggregator on itself would start aggregators without end", abs, joined)
		}
	}
	if len(joined) > MaxNesting {
		return nil, fmt.Errorf("refusing to serve config %s: aggregators would nest %d deep (%s), more than %d", abs, len(joined), joined, MaxNesting)
	}
	return joined, nil
}

// Env returns the "NAME=value" entry that hands the chain down.
func (c Chain) Env() string {
	b, _ := json.Marshal(c) // strings only: cannot fail
	return ChainEnv + "=" + string(b)
}

// String is the chain's configs joined by arrows, topmost first.
func (c Chain) String() string {
	configs := make([]string, len(c))
	for i, l := range c {
		configs[i] = l.Config
	}
	return strings.Join(configs, " -> ")
}
