package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A mistake on the command line or in the config says what is wrong, in
// the words of the usage text (flags with two dashes), on the last line of
// stderr but one, points to the README section that explains it on the
// last, and exits 2 (flags) or 1 (config).
func TestCLIErrorMessages(t *testing.T) {
	cfg := writeConfig(t, ts("alpha"))
	typo := filepath.Join(t.TempDir(), "typo.json")
	if err := os.WriteFile(typo, []byte(`{"mcpServer": {"a": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--config", cfg, "--startup-timeout", "5"}, 2, "--startup-timeout 5: needs a unit: a duration such as 5s or 1m"},
		{[]string{"--config", cfg, "--startup-timeout", "soon"}, 2, "--startup-timeout soon: not a duration: write one such as 30s, 1m or 1m30s"},
		{[]string{"--config", cfg, "--startup-timeout=0s"}, 2, "--startup-timeout 0s: must be positive"},
		{[]string{"--config", cfg, "--reload-poll", "5"}, 2, "--reload-poll 5: needs a unit: a duration such as 5s or 1m"},
		{[]string{"--config", cfg, "--reload-poll", "-1s"}, 2, "--reload-poll -1s: must not be negative (0 looks only on SIGHUP)"},
		{[]string{"--confg", cfg}, 2, "unknown flag --confg (did you mean --config?)"},
		{[]string{"--config", cfg, "-seperator", "__"}, 2, "unknown flag --seperator (did you mean --separator?)"},
		{[]string{"--config"}, 2, "flag needs an argument: --config"},
		{[]string{"--config", cfg, "--debug=maybe"}, 2, `invalid boolean value "maybe" for --debug: give it alone, or as =true or =false`},
		{[]string{"--config", cfg, "extra"}, 2, `unexpected argument "extra" (flags start with --)`},
		{[]string{"--config", typo}, 1, "config: " + typo + `: mcpServers: missing (found "mcpServer": a typo?)`},
	} {
		t.Run(strings.Join(tc.args[1:], " "), func(t *testing.T) {
			r := runToExit(t, nil, "", tc.args...)
			section := "flags"
			if tc.code == 1 {
				section = "configure"
			}
			want := "mcp-simple-aggregator: " + tc.want + "\nmcp-simple-aggregator: see README.md#" + section
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if last := strings.Join(lines[max(len(lines)-2, 0):], "\n"); r.code != tc.code || last != want {
				t.Errorf("exit %d, last stderr lines:\n %q\nwant exit %d and\n %q", r.code, last, tc.code, want)
			}
		})
	}
}
