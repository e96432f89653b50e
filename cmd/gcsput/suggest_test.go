package main

import "testing"

// The did-you-mean rule: one edit for a short word, two for a longer one, a swap counts
// one, a unique prefix of three letters or more; nothing for a word far from them all.
func TestNearest(t *testing.T) {
	names := []string{"cp", "sync", "rsync", "rm", "ls", "du", "delete", "dry-run", "recursive", "max-delete"}
	for word, want := range map[string]string{
		"rsinc": "rsync", "rsnyc": "rsync", "snyc": "sync", "cpp": "cp", "delet": "delete", "dryrun": "dry-run",
		"recur": "recursive", "max-delte": "max-delete", "frobnicate": "", "sync": "", "xyz": "", "": "",
	} {
		if got := nearest(word, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", word, got, want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}

// gsutil -h sizes: %g of the value rounded to two decimals, in the largest unit reached.
func TestGsutilSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 1636: "1.6 KiB",
		5 << 20: "5 MiB", 2_500_000_000: "2.33 GiB", 1 << 40: "1 TiB"} {
		if got := gsutilSize(n); got != want {
			t.Errorf("gsutilSize(%d) = %q, want %q", n, got, want)
		}
	}
}
