package upload

import (
	"fmt"
	"strconv"
	"strings"
)

// The delete guard of a sync with Delete. A backup tool that deletes must
// ask, before anything changes, whether the source it sees is the one the
// user meant: an unmounted volume is an empty directory, a mistyped prefix
// an empty listing, and a mirror of either deletes the backup. The rules
// are pure functions of counts, so they are tested as tables.

// The default MaxDelete: a sync may delete up to half of the destination's
// entries, and up to DefaultDeleteFloor of them however small the
// destination is. Half, as rclone bisync's default: a nightly backup loses
// a few per cent of its files a night, while a wrong source, a renamed top
// directory or a tree encrypted in place under new names deletes most of
// them. The floor keeps a small destination usable (a prefix of 3 objects
// where 2 files were renamed) without letting a large one be emptied. It
// applies only when the sides overlap: deletes that would remove every
// destination entry (source and destination share no path) are refused by
// default however few they are, as a mistyped source or destination looks
// exactly like that.
const (
	DefaultMaxDeletePercent = 50
	DefaultDeleteFloor      = 10
)

// MaxDelete is how much of the destination one sync may delete. The zero
// value is the default (see DefaultMaxDeletePercent); [MaxDeleteCount] and
// [MaxDeletePercent] replace it. Whatever the limit, a source that holds no
// entries never deletes anything (GuardEmptySource).
type MaxDelete struct {
	set     bool
	percent bool // n is a share of the destination's entries, else a count
	n       int
}

// MaxDeleteCount allows at most n deletes (n ≥ 0).
func MaxDeleteCount(n int) MaxDelete { return MaxDelete{set: true, n: n} }

// MaxDeletePercent allows deleting at most pct per cent (0 to 100) of the
// destination's entries; 100 turns the limit off.
func MaxDeletePercent(pct int) MaxDelete { return MaxDelete{set: true, percent: true, n: pct} }

// ParseMaxDelete reads a limit as [MaxDelete.String] writes it (and the
// gcsput command's --max-delete takes it): "N" allows N deletes, "P%" P per
// cent (0 to 100) of the destination's entries, and "" is the default. A
// bad one is an *[OptionError] for SyncOptions.MaxDelete.
func ParseMaxDelete(s string) (MaxDelete, error) {
	if s == "" {
		return MaxDelete{}, nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 100 {
			return MaxDelete{}, badOption("SyncOptions.MaxDelete", s, "a share of the destination is 0%% to 100%%, e.g. 25%%")
		}
		return MaxDeletePercent(n), nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return MaxDelete{}, badOption("SyncOptions.MaxDelete", s, "give a number of entries (e.g. 100) or a share of the destination (e.g. 25%%)")
	}
	return MaxDeleteCount(n), nil
}

// check refuses a count below 0 or a share outside 0-100.
func (m MaxDelete) check() error {
	if m.n < 0 || m.percent && m.n > 100 {
		return badOption("SyncOptions.MaxDelete", m.String(), "give a count of 0 or more, or a share of 0%% to 100%%")
	}
	return nil
}

// allows reports whether deleting del of the dest entries stays within the limit.
func (m MaxDelete) allows(del, dest int) bool {
	switch {
	case !m.set:
		return del < dest && (del <= DefaultDeleteFloor || del*100 <= DefaultMaxDeletePercent*dest)
	case m.percent:
		return del*100 <= m.n*dest
	}
	return del <= m.n
}

// String is the limit as the gcsput command's --max-delete takes it ("20",
// "25%"), or a sentence for the default.
func (m MaxDelete) String() string {
	switch {
	case !m.set:
		return fmt.Sprintf("by default %d%% of the destination, or %d entries if that is more", DefaultMaxDeletePercent, DefaultDeleteFloor)
	case m.percent:
		return strconv.Itoa(m.n) + "%"
	}
	return strconv.Itoa(m.n)
}

// GuardReason says why the delete guard refused a sync.
type GuardReason string

// The delete guard's refusals.
const (
	// GuardEmptySource: the source holds no entries (after the filters)
	// and the destination would lose some. There is no override: a sync
	// never empties its destination; delete the entries themselves.
	GuardEmptySource GuardReason = "empty source"
	// GuardNoSharedPath: the deletes would remove every entry of the
	// destination, which shares no path with the source (one side
	// mistyped), and MaxDelete (the default) does not allow them.
	GuardNoSharedPath GuardReason = "no shared path"
	// GuardOverLimit: the deletes are more than MaxDelete allows.
	GuardOverLimit GuardReason = "over the limit"
)

// DeleteGuardError is the delete guard's refusal of a sync, decided after
// both sides were read and before anything was copied or deleted: a wrong
// source is as wrong to copy from as to delete by. It matches
// ErrDeleteGuard. The counts are after the filters; DestEntries and Deletes
// are this shard's.
type DeleteGuardError struct {
	Reason        GuardReason
	Source, Dest  Side
	SourceEntries int
	DestEntries   int
	Deletes       int
	Filtered      bool // Include, Exclude or ExcludeRegexp narrowed both sides
	Limit         MaxDelete
}

func (e *DeleteGuardError) Error() string {
	head := "upload: sync refused by the delete guard: "
	switch e.Reason {
	case GuardEmptySource:
		what := "no " + e.Source.noun() + "s"
		if e.Filtered {
			what += " that the filters take"
		}
		return head + fmt.Sprintf("the source %s holds %s, so %s of %s would be deleted; "+
			"an unmounted volume or a mistyped prefix looks exactly like this. Nothing was changed. "+
			"A sync never empties its destination: delete its entries themselves to do that", e.Source, what, e.All(), e.Dest)
	case GuardNoSharedPath:
		return head + fmt.Sprintf("%s of %s would be deleted: %s and %s share no path, as when one of them is mistyped. "+
			"Nothing was changed. If the deletes are meant, allow them with MaxDeleteCount(%d) or MaxDeletePercent(100)",
			e.All(), e.Dest, e.Source, e.Dest, e.Deletes)
	}
	return head + fmt.Sprintf("%d of the %s of %s (%d%%) would be deleted, more than the limit allows (%s). Nothing was changed. "+
		"If the deletes are meant, allow them with MaxDeleteCount(%d) or MaxDeletePercent(100)",
		e.Deletes, plural(e.DestEntries, e.Dest.noun()), e.Dest, e.Percent(), e.Limit, e.Deletes)
}

// Is makes errors.Is(err, ErrDeleteGuard) true.
func (e *DeleteGuardError) Is(target error) bool { return target == ErrDeleteGuard }

// All names every entry of the destination: "all 3 objects", "the one file".
func (e *DeleteGuardError) All() string {
	if e.DestEntries == 1 {
		return "the one " + e.Dest.noun()
	}
	return "all " + plural(e.DestEntries, e.Dest.noun())
}

// Percent is Deletes of DestEntries in per cent, rounded up: 101 of 200
// shows as 51%, more than a limit of 50%, as it is.
func (e *DeleteGuardError) Percent() int {
	return (e.Deletes*100 + e.DestEntries - 1) / max(e.DestEntries, 1)
}

// plural is "1 file", "2 files".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// deleteGuard is what the guard looks at: the deletes a sync planned and
// the sides they come from.
type deleteGuard struct {
	e         DeleteGuardError // the counts, and the refusal's fields
	elsewhere int              // failures of the walk that another shard reports
}

func (s *syncRun) guard(p *SyncPlan) deleteGuard {
	filtered := len(s.o.Include)+len(s.o.Exclude)+len(s.o.ExcludeRegexp) > 0
	return deleteGuard{e: DeleteGuardError{Source: s.src, Dest: s.dst, SourceEntries: s.sources, DestEntries: p.DestEntries,
		Deletes: p.deletes.len(), Filtered: filtered, Limit: s.o.MaxDelete}, elsewhere: s.elsewhere}
}

// refusal returns why the sync must not run at all, nil when it may.
func (g deleteGuard) refusal() error {
	e := g.e
	switch {
	case e.Deletes == 0:
		return nil
	case e.SourceEntries == 0:
		e.Reason = GuardEmptySource
	case !e.Limit.allows(e.Deletes, e.DestEntries) && e.Deletes == e.DestEntries:
		e.Reason = GuardNoSharedPath
	case !e.Limit.allows(e.Deletes, e.DestEntries):
		e.Reason = GuardOverLimit
	default:
		return nil
	}
	return &e
}

// withheld says why the planned deletes must not run once the copies are
// done ("" when they may): after any failure the source was not seen whole
// or not copied whole, and what it lacks is not known.
func (g deleteGuard) withheld(copiesOK bool, failed, interrupted int) string {
	switch {
	case g.e.Deletes == 0:
		return ""
	case interrupted > 0:
		return "the sync was interrupted"
	case failed > 0:
		return plural(failed, "failure")
	case !copiesOK:
		return "the copies did not all succeed"
	case g.elsewhere > 0:
		return plural(g.elsewhere, "failure") + " of the walk, reported by the shard that owns it"
	}
	return ""
}
