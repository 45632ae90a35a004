package e2e

import (
	"strings"
	"testing"
	"time"
)

// A server added to the config while a client's session goes on reaches
// that session: Claude Code and Gemini CLI (which fetch tools/list again
// on list_changed) offer its tool to the model, which calls it, under the
// server's own name, in the same session. The config is edited once the
// model has been offered the first server's tools; the model keeps working
// (half-second calls of "slow") until the new tool is offered. (Codex
// 0.169 never fetches the list again: its users get the change in their
// next session, as README says.)
func TestRealClientsSeeAServerAddedMidSession(t *testing.T) {
	requireRealClients(t)
	first := ts("first", "-tool-names", `["first_tool"]`)
	cfg := writeConfig(t, first)
	for _, c := range realClients {
		if c.name == "Codex" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			model := startModel(t, c.api, []string{"first", "added"}, "first_tool", "added_tool")
			model.pace = "slow"
			edited := make(chan struct{})
			go func() {
				defer close(edited)
				select {
				case <-model.offering:
					rewrite(t, cfg, first, ts("added", "-tool-names", `["added_tool"]`))
				case <-time.After(2 * time.Minute):
				}
			}()
			run := runClient(t, c, model.url, "all", []string{realClientsAggregator(), "--config", cfg, "--reload-poll", "50ms"}, 2*time.Minute)
			<-edited
			model.check(t, nil)
			if model.offeredFirst("added_tool") {
				t.Errorf("the added server's tool was offered before the config was edited")
			}
			if run.err != nil || !strings.Contains(run.stdout, model.final) {
				t.Errorf("%s: %v; stdout:\n%s\nstderr:\n%s", c.name, run.err, run.stdout, clipText(run.stderr, 4000))
			}
			rewrite(t, cfg, first) // the next client starts from the first server alone
		})
	}
}
