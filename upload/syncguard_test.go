package upload

import (
	"errors"
	"strings"
	"testing"
)

// The limit as a table: the default's 50% and its floor of 10, a count, a share.
func TestMaxDeleteAllows(t *testing.T) {
	def, count, pct, all, none := MaxDelete{}, MaxDeleteCount(5), MaxDeletePercent(20), MaxDeletePercent(100), MaxDeleteCount(0)
	for _, c := range []struct {
		m         MaxDelete
		del, dest int
		want      bool
	}{
		{def, 1, 2, true},    // a small destination: within the floor
		{def, 10, 11, true},  // the floor
		{def, 1, 1, false},   // all of it: the sides share nothing
		{def, 10, 10, false}, // all of it, within the floor
		{count, 5, 5, true},  // an explicit limit allows all of it
		{all, 10, 10, true},
		{def, 11, 12, false},   // past the floor and past half
		{def, 11, 22, true},    // half
		{def, 12, 22, false},   // more than half
		{def, 500, 1000, true}, // half of a large one
		{def, 501, 1000, false},
		{count, 5, 1000, true},
		{count, 6, 1000, false},
		{count, 6, 6, false},
		{pct, 2, 10, true},
		{pct, 3, 10, false},
		{pct, 1, 1, false}, // an explicit share has no floor
		{all, 1000, 1000, true},
		{none, 0, 10, true},
		{none, 1, 10, false},
	} {
		if got := c.m.allows(c.del, c.dest); got != c.want {
			t.Errorf("%v allows %d of %d = %v, want %v", c.m, c.del, c.dest, got, c.want)
		}
	}
	for m, want := range map[MaxDelete]string{def: "by default 50% of the destination, or 10 entries if that is more", count: "5", pct: "20%", none: "0"} {
		if m.String() != want {
			t.Errorf("%#v: %q, want %q", m, m.String(), want)
		}
	}
}

// Which counts the guard refuses, and why; its message in the library's words.
func TestDeleteGuardRefusal(t *testing.T) {
	src, dst := LocalSide("/mnt/data"), RemoteSide(URL{Bucket: "b", Object: "backup"})
	for _, c := range []struct {
		name              string
		source, dest, del int
		filtered          bool
		limit             MaxDelete
		want              GuardReason // "" for no refusal
		text              string
	}{
		{name: "nothing to delete", source: 0, dest: 5, del: 0},
		{name: "empty source", source: 0, dest: 3, del: 3, want: GuardEmptySource,
			text: "upload: sync refused by the delete guard: the source /mnt/data holds no files, so all 3 objects of gs://b/backup would be deleted; " +
				"an unmounted volume or a mistyped prefix looks exactly like this. Nothing was changed. A sync never empties its destination: delete its entries themselves to do that"},
		{name: "empty source, even with the limit off", source: 0, dest: 1, del: 1, limit: MaxDeletePercent(100), want: GuardEmptySource,
			text: "holds no files, so the one object of gs://b/backup would be deleted"},
		{name: "filters took nothing", source: 0, dest: 2, del: 2, filtered: true, want: GuardEmptySource, text: "holds no files that the filters take"},
		{name: "over the default", source: 4, dest: 30, del: 20, want: GuardOverLimit,
			text: "upload: sync refused by the delete guard: 20 of the 30 objects of gs://b/backup (67%) would be deleted, more than the limit allows " +
				"(by default 50% of the destination, or 10 entries if that is more). Nothing was changed. If the deletes are meant, allow them with MaxDeleteCount(20) or MaxDeletePercent(100)"},
		{name: "over a count", source: 4, dest: 30, del: 3, limit: MaxDeleteCount(2), want: GuardOverLimit, text: "more than the limit allows (2)"},
		{name: "over a share", source: 4, dest: 30, del: 7, limit: MaxDeletePercent(20), want: GuardOverLimit, text: "7 of the 30 objects of gs://b/backup (24%)"},
		{name: "within a share", source: 4, dest: 30, del: 6, limit: MaxDeletePercent(20)},
		{name: "just over half, shown rounded up", source: 1, dest: 200, del: 101, limit: MaxDeletePercent(50), want: GuardOverLimit, text: "(51%)"},
		{name: "limit off", source: 1, dest: 30, del: 29, limit: MaxDeletePercent(100)},
		{name: "no path shared, within the floor", source: 10, dest: 1, del: 1, want: GuardNoSharedPath,
			text: "upload: sync refused by the delete guard: the one object of gs://b/backup would be deleted: /mnt/data and gs://b/backup share no path, " +
				"as when one of them is mistyped. Nothing was changed. If the deletes are meant, allow them with MaxDeleteCount(1) or MaxDeletePercent(100)"},
		{name: "no path shared, 10 of 10", source: 1, dest: 10, del: 10, want: GuardNoSharedPath, text: "all 10 objects of gs://b/backup would be deleted"},
		{name: "no path shared, limit off", source: 1, dest: 10, del: 10, limit: MaxDeletePercent(100)},
		{name: "no path shared, a count", source: 1, dest: 10, del: 10, limit: MaxDeleteCount(10)},
	} {
		g := deleteGuard{e: DeleteGuardError{Source: src, Dest: dst, SourceEntries: c.source, DestEntries: c.dest, Deletes: c.del,
			Filtered: c.filtered, Limit: c.limit}}
		err := g.refusal()
		var ge *DeleteGuardError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want == "":
		case !errors.As(err, &ge) || !errors.Is(err, ErrDeleteGuard):
			t.Errorf("%s: %T %v, want a *DeleteGuardError", c.name, err, err)
		case ge.Reason != c.want || ge.Deletes != c.del || ge.DestEntries != c.dest || ge.SourceEntries != c.source || !strings.Contains(err.Error(), c.text):
			t.Errorf("%s: %+v\n%v\nwant %s and the text %q", c.name, ge, err, c.want, c.text)
		}
	}
	down := deleteGuard{e: DeleteGuardError{Source: RemoteSide(URL{Bucket: "b", Object: "typo"}), Dest: LocalSide("./restore"), DestEntries: 2, Deletes: 2}}
	if err := down.refusal(); err == nil || !strings.Contains(err.Error(), "the source gs://b/typo holds no objects, so all 2 files of ./restore would be deleted") {
		t.Errorf("download: %v", err)
	}
}

func TestDeleteGuardWithheld(t *testing.T) {
	for _, c := range []struct {
		del, failed, interr, elsewhere int
		copiesOK                       bool
		want                           string
	}{
		{del: 3, copiesOK: true, want: ""},
		{del: 0, failed: 2, want: ""}, // nothing to withhold
		{del: 3, failed: 1, copiesOK: true, want: "1 failure"},
		{del: 3, failed: 2, copiesOK: false, want: "2 failures"},
		{del: 3, failed: 2, interr: 1, want: "the sync was interrupted"},
		{del: 3, copiesOK: false, want: "the copies did not all succeed"},
		{del: 3, elsewhere: 2, copiesOK: true, want: "2 failures of the walk, reported by the shard that owns it"},
		{del: 3, failed: 1, elsewhere: 2, copiesOK: true, want: "1 failure"},
	} {
		g := deleteGuard{e: DeleteGuardError{Deletes: c.del}, elsewhere: c.elsewhere}
		if got := g.withheld(c.copiesOK, c.failed, c.interr); got != c.want {
			t.Errorf("%+v withheld = %q, want %q", c, got, c.want)
		}
	}
}

// ParseMaxDelete reads what MaxDelete.String writes; a bad limit is an
// *OptionError naming SyncOptions.MaxDelete (moved from the command's
// parseMaxDelete, with its table).
func TestParseMaxDelete(t *testing.T) {
	for _, c := range []struct {
		in   string
		want MaxDelete
		err  string
	}{
		{"", MaxDelete{}, ""},
		{"0", MaxDeleteCount(0), ""},
		{"250", MaxDeleteCount(250), ""},
		{"25%", MaxDeletePercent(25), ""},
		{"100%", MaxDeletePercent(100), ""},
		{"0%", MaxDeletePercent(0), ""},
		{"101%", MaxDelete{}, "a share of the destination is 0% to 100%, e.g. 25%"},
		{"-1", MaxDelete{}, "give a number of entries (e.g. 100) or a share of the destination (e.g. 25%)"},
		{"half", MaxDelete{}, "give a number of entries (e.g. 100) or a share of the destination (e.g. 25%)"},
		{"12.5%", MaxDelete{}, "a share of the destination is 0% to 100%, e.g. 25%"},
	} {
		got, err := ParseMaxDelete(c.in)
		var oe *OptionError
		switch {
		case c.err != "":
			if !errors.As(err, &oe) || oe.Option != "SyncOptions.MaxDelete" || oe.Value != c.in || oe.Err.Error() != c.err || !errors.Is(err, ErrBadOption) {
				t.Errorf("ParseMaxDelete(%q) = %v, want an OptionError %q", c.in, err, c.err)
			}
		case err != nil || got != c.want:
			t.Errorf("ParseMaxDelete(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if err == nil && c.in != "" && got.String() != c.in {
			t.Errorf("ParseMaxDelete(%q).String() = %q", c.in, got.String())
		}
	}
}
