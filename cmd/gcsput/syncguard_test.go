package main

import (
	"strings"
	"testing"
)

func TestParseMaxDelete(t *testing.T) {
	for _, c := range []struct {
		in   string
		want maxDelete
		err  string
	}{
		{"", maxDelete{}, ""},
		{"0", maxDelete{set: true, count: 0}, ""},
		{"250", maxDelete{set: true, count: 250}, ""},
		{"25%", maxDelete{set: true, count: -1, pct: 25}, ""},
		{"100%", maxDelete{set: true, count: -1, pct: 100}, ""},
		{"0%", maxDelete{set: true, count: -1, pct: 0}, ""},
		{"101%", maxDelete{}, `--max-delete "101%": a share of the destination is 0% to 100%, e.g. 25%`},
		{"-1", maxDelete{}, `--max-delete "-1": give a number of entries (e.g. 100) or a share of the destination (e.g. 25%)`},
		{"half", maxDelete{}, `--max-delete "half": give a number`},
		{"12.5%", maxDelete{}, `--max-delete "12.5%": a share`},
	} {
		got, err := parseMaxDelete(c.in)
		switch {
		case c.err != "":
			if _, ok := err.(*usageError); !ok || !strings.HasPrefix(err.Error(), c.err) {
				t.Errorf("parseMaxDelete(%q) = %v, want a usage error %q", c.in, err, c.err)
			}
		case err != nil || got != c.want:
			t.Errorf("parseMaxDelete(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

// The limit as a table: the default's 50% and its floor of 10, a count, a share.
func TestMaxDeleteAllows(t *testing.T) {
	def, count, pct, all, none := maxDelete{}, maxDelete{set: true, count: 5}, maxDelete{set: true, count: -1, pct: 20},
		maxDelete{set: true, count: -1, pct: 100}, maxDelete{set: true, count: 0}
	for _, c := range []struct {
		m         maxDelete
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
}

func TestDeletePlanRefusal(t *testing.T) {
	up := deletePlan{src: "/mnt/data", dst: "gs://b/backup", srcNoun: "file", dstNoun: "object", emptyHint: "gcsput rm -r gs://b/backup"}
	for _, c := range []struct {
		name              string
		source, dest, del int
		filtered          bool
		limit             string
		want              string // "" for no refusal
	}{
		{name: "nothing to delete", source: 0, dest: 5, del: 0},
		{name: "empty source", source: 0, dest: 3, del: 3,
			want: "refusing to sync --delete: the source /mnt/data holds no files, so all 3 objects of gs://b/backup would be deleted; " +
				"an unmounted volume or a mistyped prefix looks exactly like this. Nothing was changed. To empty gs://b/backup on purpose, run 'gcsput rm -r gs://b/backup'"},
		{name: "empty source, even with the limit off", source: 0, dest: 1, del: 1, limit: "100%", want: "holds no files, so the one object of gs://b/backup would be deleted"},
		{name: "filters took nothing", source: 0, dest: 2, del: 2, filtered: true, want: "holds no files that --include/--exclude take"},
		{name: "over the default", source: 4, dest: 30, del: 20,
			want: "refusing to sync --delete: 20 of the 30 objects of gs://b/backup (67%) would be deleted, more than --max-delete allows " +
				"(by default 50% of the destination, or 10 entries if that is more). Nothing was changed. Check that /mnt/data is the source you mean " +
				"('--dry-run' lists the deletes); if they are meant, run again with '--max-delete 20' (or '--max-delete 100%')"},
		{name: "over a count", source: 4, dest: 30, del: 3, limit: "2", want: "more than --max-delete allows (2)"},
		{name: "over a share", source: 4, dest: 30, del: 7, limit: "20%", want: "7 of the 30 objects of gs://b/backup (24%) would be deleted, more than --max-delete allows (20%)"},
		{name: "within a share", source: 4, dest: 30, del: 6, limit: "20%"},
		{name: "just over half, shown rounded up", source: 1, dest: 200, del: 101, limit: "50%", want: "101 of the 200 objects of gs://b/backup (51%) would be deleted"},
		{name: "limit off", source: 1, dest: 30, del: 29, limit: "100%"},
		{name: "no path shared, within the floor", source: 10, dest: 1, del: 1,
			want: "refusing to sync --delete: the one object of gs://b/backup would be deleted: /mnt/data and gs://b/backup share no path, " +
				"as when one of them is mistyped. Nothing was changed. Check that /mnt/data is the source you mean ('--dry-run' lists the deletes); " +
				"if they are meant, run again with '--max-delete 1' (or '--max-delete 100%')"},
		{name: "no path shared, 10 of 10", source: 1, dest: 10, del: 10, want: "all 10 objects of gs://b/backup would be deleted: /mnt/data and gs://b/backup share no path"},
		{name: "no path shared, limit off", source: 1, dest: 10, del: 10, limit: "100%"},
		{name: "no path shared, a count", source: 1, dest: 10, del: 10, limit: "10"},
	} {
		p := up
		p.source, p.dest, p.del, p.filtered = c.source, c.dest, c.del, c.filtered
		var err error
		if p.limit, err = parseMaxDelete(c.limit); err != nil {
			t.Fatal(err)
		}
		err = p.refusal()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want == "":
		case err == nil:
			t.Errorf("%s: not refused, want %q", c.name, c.want)
		default:
			if _, ok := err.(*usageError); !ok || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %T %v\nwant a usage error containing %q", c.name, err, err, c.want)
			}
		}
	}
	down := deletePlan{src: "gs://b/typo", dst: "./restore", srcNoun: "object", dstNoun: "file", emptyHint: "rm -r ./restore", dest: 2, del: 2}
	if err := down.refusal(); err == nil || !strings.Contains(err.Error(), "the source gs://b/typo holds no objects, so all 2 files of ./restore would be deleted") ||
		!strings.HasSuffix(err.Error(), "To empty ./restore on purpose, run 'rm -r ./restore'") {
		t.Errorf("download: %v", err)
	}
}

func TestDeletePlanWithheld(t *testing.T) {
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
		p := deletePlan{del: c.del, failed: c.failed, interr: c.interr, elsewhere: c.elsewhere}
		if got := p.withheld(c.copiesOK); got != c.want {
			t.Errorf("%+v withheld(%v) = %q, want %q", c, c.copiesOK, got, c.want)
		}
	}
}
