package naming

import "testing"

func TestStrictChars(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"ok_name-1", "ok_name-1"},
		{"a.b", "a_b"},
		{"get weather", "get_weather"},
		{"météo", "m_t_o"},       // one _ per character, not per byte
		{"日本", "__"},             // three bytes each
		{"a\xffb", "a_b"},        // an invalid byte is one
		{"k:tool/x", "k_tool_x"}, // separators of other forms
		{"", ""},
	} {
		if got := StrictChars(tt.in); got != tt.want {
			t.Errorf("StrictChars(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestConforms(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"k__tool", true},
		{"k:tool", false},
		{"", false},
		{long[:64], true},
		{long[:65], false},
		{"é", false},
	} {
		if got := Conforms(tt.name); got != tt.want || got != strictRE.MatchString(tt.name) {
			t.Errorf("Conforms(%q) = %t, want %t (as %s says)", tt.name, got, tt.want, StrictPattern)
		}
	}
}

func TestViewSeen(t *testing.T) {
	for _, tt := range []struct {
		v        View
		in, want string
	}{
		{KeepsAll, "k:a.b c", "k:a.b c"},
		{KeepsStrict, "k:a.b c", "k_a_b_c"},
		{KeepsGemini, "k:a.b c", "k:a.b_c"},
		{KeepsStrict, "k:météo", "k_m_t_o"},
		{KeepsGemini, "k:日", "k:_"},
	} {
		if got := tt.v.Seen(tt.in); got != tt.want {
			t.Errorf("%d.Seen(%q) = %q, want %q", tt.v, tt.in, got, tt.want)
		}
	}
}
