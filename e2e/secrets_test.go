package e2e

import (
	"strings"
	"testing"
)

// The secrets of a server's config entry (its env values, the variables
// expanded in it) and what it wrote on its stderr never reach the model:
// a call in flight when the server dies gets an error that says what
// happened without its stderr, and the aggregator's own log lines and
// --check show names in place of the values. The server's stderr is
// relayed to the log as it is, as a client shows it when it runs the
// server directly.
func TestSecretsDoNotReachTheModel(t *testing.T) {
	const password = "hunter2-s3cret"
	t.Setenv("MCPSA_TEST_PASSWORD", password)
	db := ts("db")
	db.env = map[string]string{"TESTSERVER_LAST_WORDS": "cannot connect to postgres://app:${MCPSA_TEST_PASSWORD}@db/prod"}
	s := startConfig(t, []server{db})
	s.initialize("2025-11-25", `{}`)
	m := s.call("tools/call", `{"name":"db:crash","arguments":{}}`)
	if _, msg := m.errorCode(); msg != `server "db" exited: exit status 3` {
		t.Errorf("the call in flight got %s, want the exit without the server's stderr", m.line)
	}
	s.waitStderr(`dropped`)
	for _, line := range strings.Split(s.stderrText(), "\n") {
		if strings.Contains(line, password) && !strings.HasPrefix(line, "[db] ") {
			t.Errorf("the aggregator's own log line shows the password: %s", line)
		}
		if strings.Contains(line, "dropped") && !strings.Contains(line, "<env TESTSERVER_LAST_WORDS>") {
			t.Errorf("the log line of the drop does not name the env entry: %s", line)
		}
	}

	missing := server{key: "gone", command: "${MCPSA_TEST_PASSWORD}/no-such-server"}
	r := runToExit(t, nil, "", "--config", writeConfig(t, missing), "--check")
	if r.code != 1 || strings.Contains(r.stdout+r.stderr, password) || !strings.Contains(r.stdout, "${MCPSA_TEST_PASSWORD}/no-such-server") {
		t.Errorf("--check (exit %d) shows the value of a variable, or not its name:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
