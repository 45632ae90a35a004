package config

import (
	"slices"
	"strings"
	"testing"
)

// lookupIn returns a LookupEnv function over env.
func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

var testEnv = map[string]string{
	"HOME":  "/home/u",
	"TOKEN": "s3cret",
	"EMPTY": "",
	"A_1":   "a1",
	"DOLL":  "$HOME", // values are not expanded again
}

func TestExpand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, err string
	}{
		{"no dollar", "plain text {x}", "plain text {x}", ""},
		{"empty", "", "", ""},
		{"bare name", "$HOME/bin", "/home/u/bin", ""},
		{"braced name", "${HOME}/bin", "/home/u/bin", ""},
		{"braced name glued", "${TOKEN}x", "s3cretx", ""},
		{"bare name takes longest run", "$A_1.x", "a1.x", ""},
		{"bare name then non-name", "x-$TOKEN-y", "x-s3cret-y", ""},
		{"value not expanded again", "$DOLL", "$HOME", ""},
		{"non-ASCII kept", "héllo $TOKEN ü", "héllo s3cret ü", ""},
		{"default when unset", "${NOPE:-fallback}", "fallback", ""},
		{"default when empty", "${EMPTY:-fallback}", "fallback", ""},
		{"default not used when set", "${TOKEN:-fallback}", "s3cret", ""},
		{"empty default", "a${NOPE:-}b", "ab", ""},
		{"default is literal", "${NOPE:-a:-b $HOME x}", "a:-b $HOME x", ""},
		{"no ${ in a default", "${NOPE:-a:-b $HOME ${x}", "", "the default of ${NOPE:-...} holds ${: a default is literal text, without ${...} or }"},
		{"nested default, set", "${TOKEN:-${HOME}}", "", "the default of ${TOKEN:-...} holds ${: a default is literal text, without ${...} or }"},
		{"nested default, unset", "${NOPE:-${HOME}}", "", "the default of ${NOPE:-...} holds ${: a default is literal text, without ${...} or }"},
		{"dollar dollar", "$$", "$", ""},
		{"dollar dollar before name", "$$HOME", "$HOME", ""},
		{"three dollars", "$$$HOME", "$/home/u", ""},
		{"dollar digit", "$1 and $2", "$1 and $2", ""},
		{"dollar dash", "a$-b", "a$-b", ""},
		{"dollar space", "costs $ 5", "costs $ 5", ""},
		{"trailing dollar", "abc$", "abc$", ""},
		{"lone dollar", "$", "$", ""},
		{"unset bare", "$NOPE", "", "environment variable NOPE is not set"},
		{"unset braced", "x${NOPE}y", "", "environment variable NOPE is not set"},
		{"empty bare", "$EMPTY", "", "environment variable EMPTY is empty"},
		{"empty braced", "${EMPTY}", "", "environment variable EMPTY is empty"},
		{"bare takes whole run", "$HOMEDIR", "", "environment variable HOMEDIR is not set"},
		{"unterminated", "${HOME", "", "unterminated ${...}"},
		{"unterminated with default", "a ${X:-b", "", "unterminated ${...}"},
		{"empty braces", "${}", "", `invalid variable name ""`},
		{"name starts with digit", "${9x}", "", `invalid variable name "9x"`},
		{"name with space", "${a b}", "", `invalid variable name "a b"`},
		{"invalid name with default", "${9x:-d}", "", `invalid variable name "9x"`},
		{"bash unset-only default is not a rule", "${a-b}", "", `invalid variable name "a-b"`},
		{"every problem", "$A ${EMPTY} ${9} ${B", "",
			"environment variable A is not set\nenvironment variable EMPTY is empty\n" +
				`invalid variable name "9"` + "\nunterminated ${...}"},
		{"repeats reported once", "$NOPE:$NOPE", "", "environment variable NOPE is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msgs := expand(tt.in, lookupIn(testEnv))
			if problems := strings.Join(msgs, "\n"); problems != tt.err {
				t.Fatalf("expand(%q) problems %q, want %q", tt.in, problems, tt.err)
			}
			if tt.err == "" && got != tt.want {
				t.Errorf("expand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestExpandLooksUpOnlyNames(t *testing.T) {
	t.Parallel()
	var asked []string
	lookup := func(name string) (string, bool) {
		asked = append(asked, name)
		return "v", true
	}
	if _, msgs := expand("$$A ${B:-x} $C ${9} $1 ${D", lookup); len(msgs) == 0 {
		t.Fatal("want problems")
	}
	if want := []string{"B", "C"}; !slices.Equal(asked, want) {
		t.Errorf("looked up %q, want %q", asked, want)
	}
}
