package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The delete guard of 'sync --delete'. A backup tool that deletes must ask,
// before anything changes, whether the source it sees is the one the user
// meant: an unmounted volume is an empty directory, a mistyped prefix an
// empty listing, and a mirror of either deletes the backup. The rules are pure
// functions of counts, so they are tested as tables and can move into the
// library with sync.

// The default --max-delete: a sync may delete up to half of the
// destination's entries, and up to defaultDeleteFloor of them however small
// the destination is. Half, as rclone bisync's default: a nightly backup
// loses a few per cent of its files a night, while a wrong source, a
// renamed top directory or a tree encrypted in place under new names deletes
// most of them. The floor keeps a small destination usable (a prefix of 3
// objects where 2 files were renamed) without letting a large one be
// emptied. It applies only when the sides overlap: deletes that would remove
// every destination entry (source and destination share no path) are
// refused by default however few they are, as a mistyped source or
// destination looks exactly like that.
const (
	defaultMaxDeletePct = 50
	defaultDeleteFloor  = 10
)

// maxDelete is --max-delete: how much of the destination one sync may
// delete. The zero value is the default (see defaultMaxDeletePct).
type maxDelete struct {
	set   bool // given on the command line
	count int  // with set: at most count entries; -1 when pct is the limit
	pct   int  // with set and count -1: at most pct per cent of the destination's entries
}

// parseMaxDelete reads --max-delete: N (entries) or P% (of the
// destination's entries, 0-100); "" is the default.
func parseMaxDelete(s string) (maxDelete, error) {
	if s == "" {
		return maxDelete{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 100 {
			return maxDelete{}, usagef("--max-delete %q: a share of the destination is 0%% to 100%%, e.g. 25%%", s)
		}
		return maxDelete{set: true, count: -1, pct: n}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return maxDelete{}, usagef("--max-delete %q: give a number of entries (e.g. 100) or a share of the destination (e.g. 25%%)", s)
	}
	return maxDelete{set: true, count: n}, nil
}

// allows reports whether deleting del of the dest entries stays within the limit.
func (m maxDelete) allows(del, dest int) bool {
	switch {
	case !m.set:
		return del < dest && (del <= defaultDeleteFloor || del*100 <= defaultMaxDeletePct*dest)
	case m.count >= 0:
		return del <= m.count
	}
	return del*100 <= m.pct*dest
}

func (m maxDelete) String() string {
	switch {
	case !m.set:
		return fmt.Sprintf("by default %d%% of the destination, or %d entries if that is more", defaultMaxDeletePct, defaultDeleteFloor)
	case m.count >= 0:
		return strconv.Itoa(m.count)
	}
	return strconv.Itoa(m.pct) + "%"
}

// deletePlan is what the guard looks at: the deletes a sync planned and the
// sides they come from, counted after --include and --exclude.
type deletePlan struct {
	src, dst       string // the operands, as the user gave them
	srcNoun        string // what the source holds: "file" or "object"
	dstNoun        string // what the destination holds
	emptyHint      string // the command that empties dst on purpose
	source         int    // entries the source holds (copied, unchanged, skipped or failed)
	dest           int    // entries of the destination (this shard's)
	del            int    // of them, those the source lacks
	filtered       bool   // --include or --exclude narrowed both sides
	limit          maxDelete
	failed, interr int // failures and interruptions so far (the walk, the listing, the copies)
	elsewhere      int // failures of the walk that another shard reports
}

// refusal returns why the sync must not run at all, nil when it may: its
// source holds nothing while its destination would lose entries, or the
// deletes are more than --max-delete allows. Both are decided before
// anything is copied: a wrong source is as wrong to copy from as to delete by.
// An empty source has no override: to empty a destination on purpose, the
// command that deletes (emptyHint) says so plainly.
func (p deletePlan) refusal() error {
	if p.del == 0 {
		return nil
	}
	if p.source == 0 {
		what := "no " + p.srcNoun + "s"
		if p.filtered {
			what += " that --include/--exclude take"
		}
		return usagef("refusing to sync --delete: the source %s holds %s, so %s of %s would be deleted; "+
			"an unmounted volume or a mistyped prefix looks exactly like this. Nothing was changed. "+
			"To empty %s on purpose, run '%s'", p.src, what, p.all(), p.dst, p.dst, p.emptyHint)
	}
	if !p.limit.allows(p.del, p.dest) && p.del == p.dest {
		return usagef("refusing to sync --delete: %s of %s would be deleted: %s and %s share no path, "+
			"as when one of them is mistyped. Nothing was changed. Check that %s is the source you mean ('--dry-run' lists the deletes); "+
			"if they are meant, run again with '--max-delete %d' (or '--max-delete 100%%')",
			p.all(), p.dst, p.src, p.dst, p.src, p.del)
	}
	if !p.limit.allows(p.del, p.dest) {
		return usagef("refusing to sync --delete: %d of the %s of %s (%d%%) would be deleted, more than --max-delete allows (%s). "+
			"Nothing was changed. Check that %s is the source you mean ('--dry-run' lists the deletes); "+
			"if they are meant, run again with '--max-delete %d' (or '--max-delete 100%%')",
			p.del, plural(p.dest, p.dstNoun), p.dst, ceilPct(p.del, p.dest), p.limit, p.src, p.del)
	}
	return nil
}

// all names every entry of the destination: "all 3 objects", "the one object".
func (p deletePlan) all() string {
	if p.dest == 1 {
		return "the one " + p.dstNoun
	}
	return "all " + plural(p.dest, p.dstNoun)
}

// ceilPct is n of total in per cent, rounded up: 101 of 200 shows as 51%,
// more than a limit of 50%, as it is.
func ceilPct(n, total int) int { return (n*100 + total - 1) / total }

// withheld says why the planned deletes must not run once the copies are
// done ("" when they may): after any failure the source was not seen whole
// or not copied whole, and what it lacks is not known.
func (p deletePlan) withheld(copiesOK bool) string {
	switch {
	case p.del == 0:
		return ""
	case p.interr > 0:
		return "the sync was interrupted"
	case p.failed > 0:
		return plural(p.failed, "failure")
	case !copiesOK:
		return "the copies did not all succeed"
	case p.elsewhere > 0:
		return plural(p.elsewhere, "failure") + " of the walk, reported by the shard that owns it"
	}
	return ""
}
