package flags

import "strings"

// The "did you mean" of every unknown command and flag is decided here, by one rule: the
// candidate nearest in edit distance, if it is near enough to be what the user meant.

// Nearest returns the candidate closest to word, or "" when none is close: at most one
// edit for a word of up to four letters, two for a longer one ("rsinc" -> "rsync",
// "dryrun" -> "dry-run", "delet" -> "delete"), or a word that begins exactly one candidate
// and is at least three letters long ("--recur" -> "--recursive"). A tie picks the
// candidate listed first. A word that is a candidate has no suggestion.
func Nearest(word string, candidates []string) string {
	if word == "" {
		return ""
	}
	budget := 1
	if len(word) > 4 {
		budget = 2
	}
	best, bestDist := "", budget+1
	var prefixed []string
	for _, c := range candidates {
		if c == word {
			return ""
		}
		if d := editDistance(word, c); d < bestDist {
			best, bestDist = c, d
		}
		if len(word) >= 3 && strings.HasPrefix(c, word) {
			prefixed = append(prefixed, c)
		}
	}
	if best == "" && len(prefixed) == 1 {
		return prefixed[0]
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (names are ASCII),
// with a swap of two neighbours counted as one edit ("rsnyc").
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
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
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
