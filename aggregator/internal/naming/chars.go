package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// View says which characters a client keeps in a tool's name when it
// shows it to its model; it replaces each other character with _. Two
// names that differ only there (k:a.b and k:a_b, for Claude Code) would
// be one to the client, and one of them lost, or every request refused.
type View uint8

const (
	KeepsAll    View = iota // the client shows names as they are
	KeepsStrict             // [a-zA-Z0-9_-] (Claude Code, Codex)
	KeepsGemini             // [a-zA-Z0-9_.:-] (Gemini CLI)
)

// Keeps reports whether the client keeps byte c.
func (v View) Keeps(c byte) bool {
	switch v {
	case KeepsStrict:
		return strictByte(c)
	case KeepsGemini:
		return strictByte(c) || c == '.' || c == ':'
	}
	return true
}

// Seen is name as the client shows it (a character it does not keep, of
// however many bytes, becomes one _).
func (v View) Seen(name string) string {
	if v == KeepsAll {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		if r < utf8.RuneSelf && v.Keeps(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// replaced counts the characters of e's key and name that the client
// replaces.
func (v View) replaced(e Entry) int {
	n := 0
	for _, s := range []string{e.Key, e.Name} {
		for i := 0; i < len(s); i++ {
			if !v.Keeps(s[i]) {
				n++
			}
		}
	}
	return n
}

// StrictChars replaces every character outside [a-zA-Z0-9_-] with _ (one _
// per character, however many bytes it takes; an invalid byte is one).
func StrictChars(s string) string {
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

// Conforms reports whether name matches StrictPattern.
func Conforms(name string) bool {
	return len(name) >= 1 && len(name) <= strictMaxLen && StrictChars(name) == name
}

// shortHash is the first hashLen hex digits of the SHA-256 of s.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:hashLen]
}
