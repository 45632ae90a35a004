package config

import "strings"

// Nearest returns the candidate closest to word, ignoring case, when it is
// close enough to be a likely typo (an edit distance of at most a third of
// the candidate's length, and at least 1), else "". It suggests config keys
// and command-line flags.
func Nearest(word string, candidates []string) string {
	best, bestDist := "", -1
	w := strings.ToLower(word)
	for _, c := range candidates {
		d := editDistance(w, strings.ToLower(c))
		if d > max(1, len(c)/3) || bestDist >= 0 && d >= bestDist {
			continue
		}
		best, bestDist = c, d
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest returns the candidate closest to word (the least edit distance,
// ignoring case; the first of equals), however far, or "" when there are
// none. It names the real name beside a mistaken one.
func Closest(word string, candidates []string) string {
	best, bestDist := "", -1
	w := strings.ToLower(word)
	for _, c := range candidates {
		if d := editDistance(w, strings.ToLower(c)); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
