package server

import (
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// Every list kind spells its methods and flags as MCP does, a server has
// a refresh state for each kind's list_changed, and a list_changed is
// found as its kind's.
func TestKinds(t *testing.T) {
	for i := range Kinds {
		k := &Kinds[i]
		if k.Changed != "notifications/"+k.Name+"/list_changed" || k.Listen != k.Name+"ListChanged" || k.Lists[0].Method != k.Name+"/list" {
			t.Errorf("%s: changed %q, listen %q, method %q", k.Name, k.Changed, k.Listen, k.Lists[0].Method)
		}
		if New(config.Server{Key: k.Name, Command: "fake"}, &Settings{}, nil, nil).refreshes[k.Changed] == nil {
			t.Errorf("%s: a server has no refresh state for %s", k.Name, k.Changed)
		}
		if kindChanged(k.Changed) != k {
			t.Errorf("%s: its list_changed is not found as its kind's", k.Name)
		}
	}
}
