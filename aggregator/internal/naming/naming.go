// Package naming forms the names under which the aggregator lists its
// servers' tools and prompts: KEY+separator+name, or its strict form
// (^[a-zA-Z0-9_-]{1,64}$) for a client that refuses others, shortened to
// the room a client's own prefix leaves and told apart where two names
// would be one, to the aggregator or as the client shows them. It also
// holds the table of known clients (what each does with the names it is
// given) and what a client gets from the user's settings. Everything here
// is a pure function of its arguments: no state, no locks, no logging.
package naming

import (
	"strings"
	"unicode/utf8"
)

// Scheme is how prefixed names are formed for one client: KEY+Sep+name,
// or, when Strict, the strict form of it; in either form no longer than
// Max, the room the client's own prefix leaves (clients.go).
type Scheme struct {
	Sep    string // between server key and name
	Strict bool   // every name made to match StrictPattern
	Max    int    // the longest name served; 0: no bound
	View   View   // the characters the client keeps in a name: two names it would make one are told apart
}

// The strict form: the pattern Claude Desktop checks every tool name
// against, and the separator it gets unless --separator was given.
const (
	StrictPattern = "^[a-zA-Z0-9_-]{1,64}$"
	StrictSep     = "__"
	strictMaxLen  = 64
	hashLen       = 8 // hex digits of SHA-256 in a shortened name
	// minNameLen is the least room a name is given, whatever the client's
	// prefix takes: a head of key and name besides "_" and the hash.
	minNameLen = 24
)

// A Change says why a listed name differs from KEY+sep+name.
type Change uint8

const (
	CharsReplaced Change = 1 << iota // characters outside the pattern became _
	Shortened                        // over the client's room: heads and a hash
	Disambiguated                    // its name was another entry's too: a hash added
	AmbiguousKey                     // its key holds the separator, or ends with a part of it
)

// Describe names the changes, for log lines: "with characters replaced, shortened".
func (ch Change) Describe() string {
	var parts []string
	if ch&CharsReplaced != 0 {
		parts = append(parts, "with characters replaced")
	}
	if ch&Shortened != 0 {
		parts = append(parts, "shortened")
	}
	if ch&Disambiguated != 0 {
		parts = append(parts, "told apart by a hash")
	}
	if ch&AmbiguousKey != 0 && ch&Disambiguated == 0 {
		parts = append(parts, "with a key that holds the separator")
	}
	return strings.Join(parts, ", ")
}

// Entry is one name to list: the server's key and the server's own name.
type Entry struct{ Key, Name string }

// Assigned is the name an entry is listed under and how it was changed;
// Hidden when an earlier entry has the same name.
type Assigned struct {
	Name   string
	Change Change
	Hidden bool
}

// Held is a name an entry was served under, and when: a higher Gen was
// served more lately.
type Held struct {
	Name string
	Gen  int
}

// Assign names every entry. A name is KEY+sep+name, in strict mode put in
// strict form first. Entries whose names collide are told apart by a hash
// of their full name, except the one whose name is exactly KEY+sep+name
// with a key that neither holds the separator nor ends with a part of it:
// such names cannot collide with each other (the first separator in the
// name ends the key), so there is at most one, and it keeps its name. The
// names depend only on the set of entries, never on their order, and a
// server added beside them changes none of the names of those with clean
// keys. An entry a server lists twice is served once (its first); a
// collision that remains (two equal hashes) hides the later entry.
func (n Scheme) Assign(entries []Entry) []Assigned {
	return n.AssignKeeping(entries, nil)
}

// AssignKeeping is Assign where a name held already (held: the names
// served so far, by entry) stays its holder's in a collision, and the
// others are told apart: within a session, no name changes because
// another server came (a reload, a server starting late), even a server
// whose key is not clean.
func (n Scheme) AssignKeeping(entries []Entry, held map[Entry]Held) []Assigned {
	out := make([]Assigned, len(entries))
	listed := make(map[Entry]bool, len(entries))
	for i, e := range entries {
		if listed[e] { // the same server lists the same name again
			out[i] = Assigned{Name: n.form(e).Name, Hidden: true}
			continue
		}
		listed[e] = true
		out[i] = n.form(e)
	}
	n.disambiguate(entries, out, held)
	seen := make(map[string]bool, len(out))
	for i := range out {
		if out[i].Hidden {
			continue
		}
		if v := n.View.Seen(out[i].Name); seen[v] {
			out[i].Hidden = true
		} else {
			seen[v] = true
		}
	}
	return out
}

// form is an entry's name before collisions are looked at.
func (n Scheme) form(e Entry) Assigned {
	plain := e.Key + n.Sep + e.Name
	var a Assigned
	if !cleanKey(e.Key, n.Sep) {
		a.Change = AmbiguousKey
	}
	key, name := n.parts(e)
	a.Name = key + n.Sep + name
	if a.Name != plain {
		a.Change |= CharsReplaced
	}
	if limit := n.Limit(); limit > 0 && len(a.Name) > limit {
		a.Name = n.shorten(key, name, plain)
		a.Change |= Shortened
	}
	return a
}

// MayBeShortened reports whether name may be one n shortened to fit the
// client's room (its key cut, "_" and hashLen hex digits at its end).
func (n Scheme) MayBeShortened(name string) bool {
	if n.Limit() == 0 || len(name) < hashLen+1 || name[len(name)-hashLen-1] != '_' {
		return false
	}
	for _, r := range name[len(name)-hashLen:] {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// ServedKey is a server's key as it stands before the separator in the
// names n forms (before any shortening): in strict form for a strict
// scheme.
func (n Scheme) ServedKey(key string) string {
	if n.Strict {
		return StrictChars(key)
	}
	return key
}

// parts are the key and the name of e as they are served: in strict form
// for a strict scheme.
func (n Scheme) parts(e Entry) (key, name string) {
	if n.Strict {
		return StrictChars(e.Key), StrictChars(e.Name)
	}
	return e.Key, e.Name
}

// Limit is the longest name n serves (0: no bound): Max, but at least
// minNameLen; 64 for strict names without a Max.
func (n Scheme) Limit() int {
	switch {
	case n.Max > 0:
		return max(n.Max, minNameLen)
	case n.Strict:
		return strictMaxLen
	}
	return 0
}

// shorten makes a name of at most n.Limit() characters that stays readable:
// the start of the key (all of it, unless it would leave the name less
// than two thirds of the room), the separator, the start of the name, "_"
// and the first hashLen hex digits of the SHA-256 of full (KEY+sep+name as
// the server gave them), so that it is the same on every run, whatever
// else is listed.
func (n Scheme) shorten(key, name, full string) string {
	room := n.Limit() - len(n.Sep) - 1 - hashLen
	keyRoom := min(len(key), max(room/3, room-len(name)))
	key = cut(key, keyRoom)
	return key + n.Sep + cut(name, room-len(key)) + "_" + shortHash(full)
}

// hashed is name told apart from another by the hash of full: with "_" and
// the hash added when that fits in the room, else shortened.
func (n Scheme) hashed(e Entry, name, full string) string {
	if limit := n.Limit(); limit == 0 || len(name)+1+hashLen <= limit {
		return name + "_" + shortHash(full)
	}
	key, own := n.parts(e)
	return n.shorten(key, own, full)
}

// cut is the longest start of s of at most size bytes that does not end
// inside a character.
func cut(s string, size int) string {
	if size <= 0 {
		return ""
	}
	if len(s) <= size {
		return s
	}
	for size > 0 && !utf8.RuneStart(s[size]) {
		size--
	}
	return s[:size]
}

// cleanKey reports whether KEY+sep+name can be split back at the first
// sep: the key neither holds sep nor ends with a beginning of it ("a_"
// with "__": "a_"+"__"+"x" and "a"+"__"+"_x" are one name).
func cleanKey(key, sep string) bool {
	if strings.Contains(key, sep) {
		return false
	}
	for i := 1; i < len(sep); i++ {
		if strings.HasSuffix(key, sep[:i]) {
			return false
		}
	}
	return true
}

// disambiguate gives every entry whose name another entry also got (as
// the client sees names: Scheme.View) a hash of its plain name, but the
// one that held the name already (held), or else the one whose name is
// unchanged (see Assign; of several such in the client's view, the first
// plain name in byte order, whatever the order of the entries).
func (n Scheme) disambiguate(entries []Entry, out []Assigned, held map[Entry]Held) {
	groups := make(map[string][]int)
	for i, a := range out {
		if !a.Hidden {
			v := n.View.Seen(a.Name)
			groups[v] = append(groups[v], i)
		}
	}
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		keeper := n.keeper(entries, out, idx, held)
		for _, i := range idx {
			if i == keeper || out[i].Change&Shortened != 0 {
				continue // it keeps the name; a shortened name has its hash already
			}
			plain := entries[i].Key + n.Sep + entries[i].Name
			out[i].Name = n.hashed(entries[i], out[i].Name, plain)
			out[i].Change |= Disambiguated
		}
	}
}

// keeper is the entry of a collision group idx that keeps its name (-1:
// none): the one that held it already (of several, the one served under
// it most lately); else, of the unchanged ones, the
// one with the fewest characters the client replaces in its key and name
// (k:a_b before k:a.b), then the first plain name in byte order.
func (n Scheme) keeper(entries []Entry, out []Assigned, idx []int, held map[Entry]Held) int {
	keeper, keeperGen := -1, -1
	better := func(i, j int) bool {
		ri, rj := n.View.replaced(entries[i]), n.View.replaced(entries[j])
		return ri < rj || ri == rj && entries[i].Key+n.Sep+entries[i].Name < entries[j].Key+n.Sep+entries[j].Name
	}
	for _, i := range idx { // the one that held it most lately
		if h, ok := held[entries[i]]; ok && h.Name == out[i].Name && h.Gen > keeperGen {
			keeper, keeperGen = i, h.Gen
		}
	}
	if keeper >= 0 {
		return keeper
	}
	for _, i := range idx {
		if out[i].Change == 0 && (keeper < 0 || better(i, keeper)) {
			keeper = i
		}
	}
	return keeper
}
