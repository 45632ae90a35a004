package printable

import "testing"

func TestAppend(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, café 🙂", "plain text, café 🙂"},
		{"\x1b[2J\rmcp-simple-aggregator: error: forged\x07", `\x1b[2J\rmcp-simple-aggregator: error: forged\a`},
		{"\x1b]0;title\x07", `\x1b]0;title\a`},
		{"tab\there\n", "tab\there\\n"},
		{"c1 \u009b31m del \x7f", `c1 \u009b31m del \x7f`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`},
		{"bad \xff\x9b utf-8", `bad \xff\x9b utf-8`},
	} {
		if got := string(Append(nil, []byte(tc.in), '\t')); got != tc.want {
			t.Errorf("Append(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if !HasControl("x\r") || HasControl("x y é") {
		t.Error("HasControl")
	}
}
