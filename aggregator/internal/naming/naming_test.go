package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

var strictRE = regexp.MustCompile(StrictPattern)

// long is a tool name of 100 characters.
var long = strings.Repeat("very_long_tool_name_", 5)

// hash8 is the short hash of a full name, computed here independently.
func hash8(full string) string {
	sum := sha256.Sum256([]byte(full))
	return hex.EncodeToString(sum[:])[:8]
}

// assignTest is a scheme given entries, and the names it should give
// them, in order.
type assignTest struct {
	entry Entry
	want  Assigned
}

func runAssign(t *testing.T, n Scheme, tests []assignTest) []Assigned {
	t.Helper()
	entries := make([]Entry, len(tests))
	for i, tt := range tests {
		entries[i] = tt.entry
	}
	got := n.Assign(entries)
	for i, tt := range tests {
		if got[i] != tt.want {
			t.Errorf("%+v: %v: got %+v, want %+v", n, tt.entry, got[i], tt.want)
		}
	}
	return got
}

func TestStrictNames(t *testing.T) {
	head := ("k__" + long)[:55]
	got := runAssign(t, Scheme{Sep: "__", Strict: true}, []assignTest{
		{Entry{"immich", "immich.assets.list"}, Assigned{Name: "immich__immich_assets_list", Change: CharsReplaced}}, // dotted
		{Entry{"w", "get weather"}, Assigned{Name: "w__get_weather", Change: CharsReplaced}},                         // spaced
		{Entry{"w", "météo"}, Assigned{Name: "w__m_t_o", Change: CharsReplaced}},                                     // non-ASCII: one _ per character
		{Entry{"k", long}, Assigned{Name: head + "_" + hash8("k__"+long), Change: Shortened}},                        // 100 characters
		// collides with a_b, which keeps its name
		{Entry{"k", "a.b"}, Assigned{Name: "k__a_b_" + hash8("k__a.b"), Change: CharsReplaced | Disambiguated}},
		{Entry{"k", "a_b"}, Assigned{Name: "k__a_b"}},
		// collides with x y: neither is unchanged, both get a hash
		{Entry{"k", "x.y"}, Assigned{Name: "k__x_y_" + hash8("k__x.y"), Change: CharsReplaced | Disambiguated}},
		{Entry{"k", "x y"}, Assigned{Name: "k__x_y_" + hash8("k__x y"), Change: CharsReplaced | Disambiguated}},
		{Entry{"my.srv", "ok"}, Assigned{Name: "my_srv__ok", Change: CharsReplaced}}, // the key too
	})
	for _, a := range got {
		if !strictRE.MatchString(a.Name) {
			t.Errorf("%q does not match %s", a.Name, StrictPattern)
		}
	}
	if len(got[3].Name) != 64 {
		t.Errorf("the shortened name has %d characters, want 64", len(got[3].Name))
	}
}

func TestPlainNamesAreKeyAndName(t *testing.T) {
	runAssign(t, Scheme{Sep: ":"}, []assignTest{
		{Entry{"k", "a.b"}, Assigned{Name: "k:a.b"}},
		{Entry{"k", "get weather"}, Assigned{Name: "k:get weather"}},
		{Entry{"k", long}, Assigned{Name: "k:" + long}},
		{Entry{"k", "a.b"}, Assigned{Name: "k:a.b", Hidden: true}}, // listed twice: served once
	})
}

// A name too long for the room is its key, the separator, the start of
// its own name, "_" and the hash of the full name: readable, the same on
// every run; a long key keeps a third of the room. A room too small for a
// readable name is taken to be minNameLen.
func TestShortenedNamesAreReadable(t *testing.T) {
	const tool = "add_pull_request_review_comment_to_pending_review"
	for _, tt := range []struct {
		max   int
		tests []assignTest
	}{
		{41, []assignTest{
			{Entry{"github", tool}, Assigned{Name: "github:add_pull_request_review_c_" + hash8("github:"+tool), Change: Shortened}},
			{Entry{"github", "get_me"}, Assigned{Name: "github:get_me"}},
			{Entry{"a_very_long_server_key", tool}, Assigned{Name: "a_very_lon:add_pull_request_revi_" + hash8("a_very_long_server_key:"+tool), Change: Shortened}},
		}},
		{5, []assignTest{
			{Entry{"github", tool}, Assigned{Name: "gith:add_pull_r_" + hash8("github:"+tool), Change: Shortened}},
		}},
	} {
		n := Scheme{Sep: ":", Max: tt.max}
		for _, a := range runAssign(t, n, tt.tests) {
			if len(a.Name) > n.Limit() {
				t.Errorf("%q has %d characters, over %d", a.Name, len(a.Name), n.Limit())
			}
		}
	}
}

// The names depend on the set of tools, never on the order they are
// listed in: names that would collide, from keys that hold the separator
// or end with a part of it ("a_" and "a", "git__hub" and "git"), or from
// characters replaced, are told apart by hashes, in strict and plain form;
// a tool one server lists twice is named once.
func TestNamesAreTheSameInAnyOrder(t *testing.T) {
	entries := []Entry{{"k", "a.b"}, {"k", "a_b"}, {"k", "a b"}, {"k", long}, {"k", long + "2"}, {"j", "a.b"}, {"k", "z"},
		{"a", "__x"}, {"a_", "_x"}, {"git__hub", "push"}, {"git", "hub__push"}, {"k", "z"}}
	for _, n := range []Scheme{{Sep: "__", Strict: true}, {Sep: "__"}} {
		byEntry := func(es []Entry) map[Entry]string {
			m := map[Entry]string{}
			for i, a := range n.Assign(es) {
				if !a.Hidden {
					m[es[i]] = a.Name
				}
			}
			return m
		}
		first := byEntry(entries)
		seen := map[string]bool{}
		for _, name := range first {
			if seen[name] {
				t.Fatalf("%+v: two tools named %q: %v", n, name, first)
			}
			seen[name] = true
		}
		if len(first) != len(entries)-1 {
			t.Errorf("%+v: %d names for %d distinct entries", n, len(first), len(entries)-1)
		}
		for _, keeps := range []Entry{{"a", "__x"}, {"git", "hub__push"}} {
			if want := keeps.Key + n.Sep + keeps.Name; first[keeps] != want {
				t.Errorf("%+v: %v is named %q, want %q (a clean key keeps its name)", n, keeps, first[keeps], want)
			}
		}
		r := rand.New(rand.NewSource(1))
		for range 20 {
			shuffled := append([]Entry(nil), entries...)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if got := byEntry(shuffled); fmt.Sprint(got) != fmt.Sprint(first) {
				t.Fatalf("%+v: order %v gives\n%v\nwant\n%v", n, shuffled, got, first)
			}
		}
	}
}

// A name held already stays its holder's in a collision, whichever entry
// would keep it otherwise; of two holders, the one that held it most
// lately; a held name that is not the one formed now counts for nothing.
func TestAssignKeepingKeepsHeldNames(t *testing.T) {
	n := Scheme{Sep: "__"}
	// Both are a____x; a's key is clean, so a keeps it when none holds it.
	entries := []Entry{{"a", "__x"}, {"a_", "_x"}}
	name, other := "a____x", "a____x_"+hash8("a____x")
	for _, tt := range []struct {
		what string
		held map[Entry]Held
		want []string
	}{
		{"none held", nil, []string{name, other}},
		{"the unclean key held it", map[Entry]Held{{"a_", "_x"}: {name, 1}}, []string{other, name}},
		{"both held it, a_ more lately", map[Entry]Held{{"a", "__x"}: {name, 1}, {"a_", "_x"}: {name, 2}}, []string{other, name}},
		{"both held it, a more lately", map[Entry]Held{{"a", "__x"}: {name, 3}, {"a_", "_x"}: {name, 2}}, []string{name, other}},
		{"a_ held another name", map[Entry]Held{{"a_", "_x"}: {"other", 5}}, []string{name, other}},
	} {
		got := n.AssignKeeping(entries, tt.held)
		for i, want := range tt.want {
			if got[i].Name != want || got[i].Hidden {
				t.Errorf("%s: %v named %+v, want %q", tt.what, entries[i], got[i], want)
			}
		}
	}
}

func TestChangeDescribe(t *testing.T) {
	for _, tt := range []struct {
		ch   Change
		want string
	}{
		{0, ""},
		{CharsReplaced, "with characters replaced"},
		{CharsReplaced | Shortened, "with characters replaced, shortened"},
		{Disambiguated, "told apart by a hash"},
		{AmbiguousKey, "with a key that holds the separator"},
		{AmbiguousKey | Disambiguated, "told apart by a hash"},
		{CharsReplaced | Shortened | Disambiguated | AmbiguousKey, "with characters replaced, shortened, told apart by a hash"},
	} {
		if got := tt.ch.Describe(); got != tt.want {
			t.Errorf("%04b: %q, want %q", tt.ch, got, tt.want)
		}
	}
}

func TestLimit(t *testing.T) {
	for _, tt := range []struct {
		n    Scheme
		want int
	}{
		{Scheme{Sep: ":"}, 0},
		{Scheme{Sep: ":", Max: 41}, 41},
		{Scheme{Sep: ":", Max: 5}, minNameLen},
		{Scheme{Sep: "__", Strict: true}, 64},
		{Scheme{Sep: "__", Strict: true, Max: 30}, 30},
	} {
		if got := tt.n.Limit(); got != tt.want {
			t.Errorf("%+v: %d, want %d", tt.n, got, tt.want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		s    string
		size int
		want string
	}{
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"abc", 2, "ab"},
		{"abc", 3, "abc"},
		{"abc", 9, "abc"},
		{"aé", 2, "a"}, // not inside é
		{"aé", 3, "aé"},
		{"日本", 4, "日"},
		{"日本", 2, ""},
	} {
		if got := cut(tt.s, tt.size); got != tt.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.s, tt.size, got, tt.want)
		}
	}
}

func TestCleanKey(t *testing.T) {
	for _, tt := range []struct {
		key, sep string
		want     bool
	}{
		{"github", ":", true},
		{"git:hub", ":", false},
		{"github", "__", true},
		{"git__hub", "__", false},
		{"a_", "__", false}, // ends with a part of the separator
		{"_a", "__", true},
		{"a-", "-_-", false},
		{"a-_", "-_-", false},
		{"", ":", true},
	} {
		if got := cleanKey(tt.key, tt.sep); got != tt.want {
			t.Errorf("cleanKey(%q, %q) = %t, want %t", tt.key, tt.sep, got, tt.want)
		}
	}
}
