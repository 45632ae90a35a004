package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestChainRefusesAConfigServedUpTheChainHoweverSpelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	top := filepath.Join(dir, "mcp.json")
	other := filepath.Join(dir, "other.json")
	for _, f := range []string{top, other} {
		if err := os.WriteFile(f, []byte(`{"mcpServers":{}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(top, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}

	chain, err := Chain(nil).Join(top)
	if err != nil {
		t.Fatal(err)
	}
	// Handed down through the environment to the next aggregator.
	name, value, _ := strings.Cut(chain.Env(), "=")
	if name != ChainEnv {
		t.Fatalf("Env() names %q, want %s", name, ChainEnv)
	}
	got, err := ChainFrom(value)
	if err != nil {
		t.Fatal(err)
	}
	chain, err = got.Join(other)
	if err != nil {
		t.Fatalf("a different config refused: %v", err)
	}
	for _, spelling := range []string{link, filepath.Join(dir, "sub", "..", "mcp.json"), top} {
		os.Mkdir(filepath.Join(dir, "sub"), 0o700)
		_, err := chain.Join(spelling)
		if err == nil {
			t.Errorf("Join(%s) under a chain serving %s: no error", spelling, top)
			continue
		}
		want := top + " -> " + other + " -> "
		if msg := err.Error(); !strings.Contains(msg, "refusing to serve config") || !strings.Contains(msg, want) {
			t.Errorf("Join(%s): %q, want the config and the chain %q...", spelling, msg, want)
		}
	}
}

func TestChainIsBoundedToMaxNesting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var chain Chain
	for i := 1; i <= MaxNesting+1; i++ {
		f := filepath.Join(dir, strings.Repeat("c", i)+".json")
		if err := os.WriteFile(f, []byte(`{}`), 0o600); err != nil {
			t.Fatal(err)
		}
		next, err := chain.Join(f)
		if i <= MaxNesting {
			if err != nil {
				t.Fatalf("aggregator %d of the chain refused: %v", i, err)
			}
			chain = next
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "nest 9 deep") {
			t.Errorf("aggregator %d of the chain: %v, want a refusal saying it would nest 9 deep", i, err)
		}
	}
}

func TestChainFromRejectsGarbage(t *testing.T) {
	t.Parallel()
	if _, err := ChainFrom("not json"); err == nil || !strings.Contains(err.Error(), ChainEnv) {
		t.Errorf("ChainFrom(garbage) = %v, want an error naming %s", err, ChainEnv)
	}
}
