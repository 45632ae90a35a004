package aggregator

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// naming is how prefixed names are formed for one client: KEY+sep+name, or,
// for a client that only accepts names matching ^[a-zA-Z0-9_-]{1,64}$, the
// strict form of it; in either form no longer than max, the room the
// client's own prefix leaves (clients.go).
type naming struct {
	sep    string   // between server key and name
	strict bool     // every name made to match strictPattern
	max    int      // the longest name served; 0: no bound
	view   charView // the characters the client keeps in a name: two names it would make one are told apart
}

// charView says which characters a client keeps in a tool's name when it
// shows it to its model; it replaces each other character with _. Two
// names that differ only there (k:a.b and k:a_b, for Claude Code) would
// be one to the client, and one of them lost, or every request refused.
type charView uint8

const (
	keepsAll    charView = iota // the client shows names as they are
	keepsStrict                 // [a-zA-Z0-9_-] (Claude Code, Codex)
	keepsGemini                 // [a-zA-Z0-9_.:-] (Gemini CLI)
)

// keeps reports whether the client keeps byte c.
func (v charView) keeps(c byte) bool {
	switch v {
	case keepsStrict:
		return strictByte(c)
	case keepsGemini:
		return strictByte(c) || c == '.' || c == ':'
	}
	return true
}

// seen is name as the client shows it (a character it does not keep, of
// however many bytes, becomes one _).
func (v charView) seen(name string) string {
	if v == keepsAll {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if r < utf8.RuneSelf && v.keeps(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// The strict form: the pattern Claude Desktop checks every tool name
// against, and the separator it gets unless --separator was given.
const (
	strictPattern = "^[a-zA-Z0-9_-]{1,64}$"
	strictMaxLen  = 64
	strictSep     = "__"
	hashLen       = 8 // hex digits of SHA-256 in a shortened name
	// minNameLen is the least room a name is given, whatever the client's
	// prefix takes: a head of key and name besides "_" and the hash.
	minNameLen = 24
)

// A nameChange says why a listed name differs from KEY+sep+name.
type nameChange uint8

const (
	charsReplaced nameChange = 1 << iota // characters outside the pattern became _
	shortened                            // over the client's room: heads and a hash
	disambiguated                        // its name was another entry's too: a hash added
	ambiguousKey                         // its key holds the separator, or ends with a part of it
)

// describe names the changes, for log lines: "with characters replaced, shortened".
func (ch nameChange) describe() string {
	var parts []string
	if ch&charsReplaced != 0 {
		parts = append(parts, "with characters replaced")
	}
	if ch&shortened != 0 {
		parts = append(parts, "shortened")
	}
	if ch&disambiguated != 0 {
		parts = append(parts, "told apart by a hash")
	}
	if ch&ambiguousKey != 0 && ch&disambiguated == 0 {
		parts = append(parts, "with a key that holds the separator")
	}
	return strings.Join(parts, ", ")
}

// entryName is one name to list: the child's key and its own name.
type entryName struct{ key, name string }

// assignedName is the name an entry is listed under and how it was
// changed; hidden when an earlier entry has the same name.
type assignedName struct {
	name   string
	change nameChange
	hidden bool
}

// assign names every entry. A name is KEY+sep+name, in strict mode put in
// strict form first. Entries whose names collide are told apart by a hash
// of their full name, except the one whose name is exactly KEY+sep+name
// with a key that neither holds the separator nor ends with a part of it:
// such names cannot collide with each other (the first separator in the
// name ends the key), so there is at most one, and it keeps its name. The
// names depend only on the set of entries, never on their order, and a
// server added beside them changes none of the names of those with clean
// keys. An entry a server lists twice is served once (its first); a
// collision that remains (two equal hashes) hides the later entry.
func (n naming) assign(entries []entryName) []assignedName {
	return n.assignKeeping(entries, nil)
}

// heldName is a name an entry was served under, and when: a higher gen
// was served more lately.
type heldName struct {
	name string
	gen  int
}

// assignKeeping is assign where a name held already (held: the names
// served so far, by entry) stays its holder's in a collision, and the
// others are told apart: within a session, no name changes because
// another server came (a reload, a server starting late), even a server
// whose key is not clean.
func (n naming) assignKeeping(entries []entryName, held map[entryName]heldName) []assignedName {
	out := make([]assignedName, len(entries))
	listed := make(map[entryName]bool, len(entries))
	for i, e := range entries {
		if listed[e] { // the same server lists the same name again
			out[i] = assignedName{name: n.form(e).name, hidden: true}
			continue
		}
		listed[e] = true
		out[i] = n.form(e)
	}
	n.disambiguate(entries, out, held)
	seen := make(map[string]bool, len(out))
	for i := range out {
		if out[i].hidden {
			continue
		}
		if v := n.view.seen(out[i].name); seen[v] {
			out[i].hidden = true
		} else {
			seen[v] = true
		}
	}
	return out
}

// form is an entry's name before collisions are looked at.
func (n naming) form(e entryName) assignedName {
	plain := e.key + n.sep + e.name
	var a assignedName
	if !cleanKey(e.key, n.sep) {
		a.change = ambiguousKey
	}
	key, name := n.parts(e)
	a.name = key + n.sep + name
	if a.name != plain {
		a.change |= charsReplaced
	}
	if limit := n.limit(); limit > 0 && len(a.name) > limit {
		a.name = n.shorten(key, name, plain)
		a.change |= shortened
	}
	return a
}

// parts are the key and the name of e as they are served: in strict form
// for a strict naming.
func (n naming) parts(e entryName) (key, name string) {
	if n.strict {
		return strictChars(e.key), strictChars(e.name)
	}
	return e.key, e.name
}

// limit is the longest name n serves (0: no bound): max, but at least
// minNameLen; 64 for strict names without a max.
func (n naming) limit() int {
	switch {
	case n.max > 0:
		return max(n.max, minNameLen)
	case n.strict:
		return strictMaxLen
	}
	return 0
}

// shorten makes a name of at most n.limit() characters that stays readable:
// the start of the key (all of it, unless it would leave the name less
// than two thirds of the room), the separator, the start of the name, "_"
// and the first hashLen hex digits of the SHA-256 of full (KEY+sep+name as
// the server gave them), so that it is the same on every run, whatever
// else is listed.
func (n naming) shorten(key, name, full string) string {
	room := n.limit() - len(n.sep) - 1 - hashLen
	keyRoom := min(len(key), max(room/3, room-len(name)))
	key = cut(key, keyRoom)
	return key + n.sep + cut(name, room-len(key)) + "_" + shortHash(full)
}

// hashed is name told apart from another by the hash of full: with "_" and
// the hash added when that fits in the room, else shortened.
func (n naming) hashed(e entryName, name, full string) string {
	if limit := n.limit(); limit == 0 || len(name)+1+hashLen <= limit {
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
// the client sees names: naming.view) a hash of its plain name, but the
// one that held the name already (held), or else the one whose name is
// unchanged (see assign; of several such in the client's view, the first
// plain name in byte order, whatever the order of the entries).
func (n naming) disambiguate(entries []entryName, out []assignedName, held map[entryName]heldName) {
	groups := make(map[string][]int)
	for i, a := range out {
		if !a.hidden {
			v := n.view.seen(a.name)
			groups[v] = append(groups[v], i)
		}
	}
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		keeper := n.keeper(entries, out, idx, held)
		for _, i := range idx {
			if i == keeper || out[i].change&shortened != 0 {
				continue // it keeps the name; a shortened name has its hash already
			}
			plain := entries[i].key + n.sep + entries[i].name
			out[i].name = n.hashed(entries[i], out[i].name, plain)
			out[i].change |= disambiguated
		}
	}
}

// keeper is the entry of a collision group idx that keeps its name (-1:
// none): the one that held it already (of several, the one served under
// it most lately); else, of the unchanged ones, the
// one with the fewest characters the client replaces in its key and name
// (k:a_b before k:a.b), then the first plain name in byte order.
func (n naming) keeper(entries []entryName, out []assignedName, idx []int, held map[entryName]heldName) int {
	keeper, keeperGen := -1, -1
	better := func(i, j int) bool {
		ri, rj := n.view.replaced(entries[i]), n.view.replaced(entries[j])
		return ri < rj || ri == rj && entries[i].key+n.sep+entries[i].name < entries[j].key+n.sep+entries[j].name
	}
	for _, i := range idx { // the one that held it most lately
		if h, ok := held[entries[i]]; ok && h.name == out[i].name && h.gen > keeperGen {
			keeper, keeperGen = i, h.gen
		}
	}
	if keeper >= 0 {
		return keeper
	}
	for _, i := range idx {
		if out[i].change == 0 && (keeper < 0 || better(i, keeper)) {
			keeper = i
		}
	}
	return keeper
}

// replaced counts the characters of e's key and name that the client
// replaces.
func (v charView) replaced(e entryName) int {
	n := 0
	for _, s := range []string{e.key, e.name} {
		for i := 0; i < len(s); i++ {
			if !v.keeps(s[i]) {
				n++
			}
		}
	}
	return n
}

// strictChars replaces every character outside [a-zA-Z0-9_-] with _ (one _
// per character, however many bytes it takes; an invalid byte is one).
func strictChars(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if !strictByte(s[i]) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		if r < utf8.RuneSelf && strictByte(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
		s = s[size:]
	}
	return b.String()
}

func strictByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// conforms reports whether name matches strictPattern.
func conforms(name string) bool {
	return len(name) >= 1 && len(name) <= strictMaxLen && strictChars(name) == name
}

// shortHash is the first hashLen hex digits of the SHA-256 of s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}
