package naming

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenEntries are the tricky ones, listed together as one set: long
// names and keys, characters outside [a-zA-Z0-9_-], names a client would
// make one (dots and spaces against underscores), keys that hold a
// separator or end with a part of it, an entry listed twice, unicode.
var goldenEntries = []Entry{
	{"github", "get_me"},
	{"github", "add_pull_request_review_comment_to_pending_review"},
	// begin and end alike: a client that cuts the middle out gets one name
	{"github", "submit_pending_pull_request_review_and_request_changes_with_all_comments_from_reviewers"},
	{"github", "submit_pending_pull_request_review_and_approve_changes_with_all_comments_from_reviewers"},
	{"a_very_long_server_key_for_the_tests", "search"},
	{"a_very_long_server_key_for_the_tests", "search_everything_there_is_to_search_in_the_index"},
	{"immich", "immich.assets.list"},
	{"k", "a.b"}, // a_b to a client that replaces dots
	{"k", "a_b"},
	{"k", "a b"},
	{"k", "a:b"},
	{"k.x", "y"}, // the key too
	{"k_x", "y"},
	{"w", "get weather"},
	{"w", "météo"},
	{"w", "天気"},
	{"w", "emoji_🌦"},
	{"w", strings.Repeat("é", 40)}, // long, in two-byte characters
	{"w", "tool/with/slashes"},
	{"git__hub", "push"}, // holds "__"
	{"git", "hub__push"},
	{"a", "__x"},
	{"a_", "_x"},      // ends with a part of "__"
	{"srv:1", "tool"}, // holds ":"
	{"srv", "1:tool"},
	{"k", "z"},
	{"k", "z"}, // listed twice by its server
}

// goldenClients are the known clients and one that is not known.
func goldenClients() []Client {
	var cs []Client
	for _, k := range Clients() {
		if k.Limit > 0 || k.Strict { // what it does with names is known
			cs = append(cs, k)
		}
	}
	return append(cs, Client{names: []string{"some-client"}, Label: "unknown client"})
}

// golden is, for each entry of goldenEntries, the name every client of
// goldenClients is served (the entries listed together, for a server name
// of DefaultServerNameLen characters), with its length, what was changed
// and what the client will still do to it. It checks that the names
// served to a client are distinct as it shows them, within its room, and
// in strict form when it needs that.
func goldenNames(t *testing.T) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# The name each client is served for each entry of a fixed set, listed together, with a\n")
	fmt.Fprintf(&b, "# server name of %d characters: NAME (LENGTH) [what was changed; what the client will\n", DefaultServerNameLen)
	fmt.Fprintf(&b, "# still do to it]. go test ./aggregator/internal/naming -update rewrites this file.\n\n")
	s := Settings{ServerNameLen: DefaultServerNameLen}
	clients := goldenClients()
	served := make([][]Assigned, len(clients))
	for c, k := range clients {
		n := s.For(k.Name())
		fmt.Fprintf(&b, "%-15s %s: %s\n", k.Label, k.Name(), describeScheme(n))
		served[c] = n.Assign(goldenEntries)
		checkServed(t, k, n, served[c])
	}
	for i, e := range goldenEntries {
		fmt.Fprintf(&b, "\n%q %q\n", e.Key, e.Name)
		for c, k := range clients {
			a := served[c][i]
			fmt.Fprintf(&b, "  %-15s %q (%d)%s\n", k.Label, a.Name, len(a.Name), remarks(k, e, a))
		}
	}
	return b.Bytes()
}

// checkServed checks the names n served to k: distinct as k shows them,
// within n's limit, and in strict form for a strict client.
func checkServed(t *testing.T, k Client, n Scheme, served []Assigned) {
	t.Helper()
	seen := map[string]string{}
	for _, a := range served {
		if a.Hidden {
			continue
		}
		v := k.Chars.Seen(a.Name)
		if other, dup := seen[v]; dup {
			t.Errorf("%s: %q and %q are one name to the client", k.Label, other, a.Name)
		}
		seen[v] = a.Name
		if limit := n.Limit(); limit > 0 && len(a.Name) > limit || k.Strict && !Conforms(a.Name) {
			t.Errorf("%s: %q is over its room of %d, or not strict", k.Label, a.Name, limit)
		}
	}
}

func describeScheme(n Scheme) string {
	s := fmt.Sprintf("separator %q", n.Sep)
	if n.Strict {
		s += ", strict"
	}
	if n.Limit() > 0 {
		s += fmt.Sprintf(", at most %d characters", n.Limit())
	}
	switch n.View {
	case KeepsStrict:
		s += ", shows [a-zA-Z0-9_-]"
	case KeepsGemini:
		s += ", shows [a-zA-Z0-9_.:-]"
	}
	return s
}

// remarks are what was done to e's name a, and what k, when it is a known
// client, will still do to it.
func remarks(k Client, e Entry, a Assigned) string {
	if a.Hidden {
		return " [hidden: listed twice, served once]"
	}
	var parts []string
	if d := a.Change.Describe(); d != "" {
		parts = append(parts, d)
	}
	if _, known := LookupClient(k.Name()); known {
		if fate := k.Fate(DefaultServerNameLen, e.Key, e.Name, a.Name); fate != "" {
			parts = append(parts, "by the client: "+fate)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " [" + strings.Join(parts, "; ") + "]"
}

func TestGolden(t *testing.T) {
	checkGolden(t, filepath.Join("testdata", "names.golden"), goldenNames(t))
}

// update has the golden files in testdata rewritten (go test -update).
var update = flag.Bool("update", false, "rewrite the golden files in testdata with what the tests produce")

// checkGolden fails t when got differs from the file at path; with -update
// it writes got to path.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the code gives (go test -update rewrites it):\n%s", path, got)
	}
}
