package flags

import (
	"flag"
	"io"
	"slices"
	"testing"
)

// The did-you-mean rule: one edit for a short word, two for a longer one, a swap counts
// one, a unique prefix of three letters or more; nothing for a word far from them all.
func TestNearest(t *testing.T) {
	names := []string{"cp", "sync", "rsync", "rm", "ls", "du", "delete", "dry-run", "recursive", "max-delete"}
	for word, want := range map[string]string{
		"rsinc": "rsync", "rsnyc": "rsync", "snyc": "sync", "cpp": "cp", "delet": "delete", "dryrun": "dry-run",
		"recur": "recursive", "max-delte": "max-delete", "frobnicate": "", "sync": "", "xyz": "", "": "",
	} {
		if got := Nearest(word, names); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", word, got, want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}

// Flags after operands, bundled short booleans, "--" ending the flags, Given by any name.
func TestParse(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var rec, dry Bool
	var par Int
	var hdr List
	var chunk int64
	fs.Var(&rec, "r", "")
	fs.Var(&dry, "n", "")
	fs.Var(&par, "parallel", "")
	fs.Var(&hdr, "h", "")
	fs.Var(Size{N: &chunk}, "chunk-size", "")
	ops, err := Parse(fs, []string{"a", "-rn", "--parallel=8", "b", "-h", "X: 1", "--chunk-size", "1MiB", "-h", "Y: 2", "--", "-v", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "-v", "c"}; !slices.Equal(ops, want) {
		t.Errorf("operands %q, want %q", ops, want)
	}
	if !bool(rec) || !bool(dry) || par != 8 || chunk != 1<<20 || !slices.Equal(hdr, List{"X: 1", "Y: 2"}) {
		t.Errorf("r=%v n=%v parallel=%d chunk=%d h=%q", rec, dry, par, chunk, hdr)
	}
	if !Given(fs, "parallel") || Given(fs, "nope") {
		t.Errorf("Given(parallel)=%v Given(nope)=%v", Given(fs, "parallel"), Given(fs, "nope"))
	}
	// "-rx" is no bundle: x is not an option, so the flag package reports "-rx" whole.
	if _, err := Parse(fs, []string{"-rx"}); err == nil || err.Error() != "flag provided but not defined: -rx" {
		t.Errorf("-rx: %v", err)
	}
	if _, err := Parse(fs, []string{"--parallel", "2x"}); err == nil ||
		LongDashes(err.Error(), []string{"parallel"}) != `invalid value "2x" for flag --parallel: want a whole number` {
		t.Errorf("--parallel 2x: %v", err)
	}
}

func TestValues(t *testing.T) {
	var g *int64
	if err := (Generation{&g}).Set("0"); err != nil || g == nil || *g != 0 {
		t.Errorf("Generation 0: %v %v", g, err)
	}
	if err := (Generation{&g}).Set("-1"); err == nil {
		t.Error("Generation -1 accepted")
	}
	var d Duration
	if err := d.Set("-1s"); err == nil || err.Error() != "want a duration such as 90s, 10m or 1h30m" {
		t.Errorf("Duration -1s: %v", err)
	}
	var b Bool
	if err := b.Set("YES"); err != nil || !b {
		t.Errorf("Bool YES: %v %v", b, err)
	}
	var n Int
	if err := n.Set("+7"); err != nil || n != 7 {
		t.Errorf("Int +7: %v %v", n, err)
	}
	if err := n.Set("7x"); err == nil {
		t.Error("Int 7x accepted")
	}
}
