package main

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/upload"
)

// holdFlags are the holds and retention cp, mv and sync write their objects under, with
// gcloud storage's spellings (gcloud storage cp --retain-until, --retention-mode,
// --temporary-hold, --event-based-hold). They are a property of the destination, like
// its key: every path of the transfer (upload, resume, copy, composite, mv, sync) takes
// them whole.
type holdFlags struct {
	retainUntil    string // --retain-until DATETIME (RFC 3339)
	retentionMode  string // --retention-mode Locked|Unlocked
	temporaryHold  bool   // --temporary-hold
	eventBasedHold bool   // --event-based-hold
}

func (h *holdFlags) register(fs *flagSet) {
	defer fs.Group(fs.Group("Retention and holds"))
	fs.String(&h.retainUntil, "retain-until", "", "DATETIME", "retain the objects until DATETIME (RFC 3339)\n"+"keep the objects written from deletion and overwrite until DATETIME (RFC 3339, e.g. 2030-01-01T00:00:00Z); the bucket must have object retention enabled")
	fs.String(&h.retentionMode, "retention-mode", "", "MODE", "Unlocked (the default) or Locked\n"+"with --retain-until: Unlocked (the default: may be shortened or removed with an override) or Locked (may only be extended, by anyone, ever)")
	fs.Bool(&h.temporaryHold, "temporary-hold", "", "write the objects under a temporary hold\n"+"write the objects under a temporary hold (released with 'gcsput meta set --no-temporary-hold')")
	fs.Bool(&h.eventBasedHold, "event-based-hold", "", "write the objects under an event-based hold\n"+"write the objects under an event-based hold (released with 'gcsput meta set --no-event-based-hold')")
}

// holds checks the flags and returns them as the library's Holds.
func (h *holdFlags) holds() (upload.Holds, error) {
	out := upload.Holds{TemporaryHold: h.temporaryHold, EventBasedHold: h.eventBasedHold}
	t, mode, err := parseRetention(h.retainUntil, h.retentionMode)
	if err != nil {
		return out, err
	}
	out.RetainUntil, out.RetentionMode = t, mode
	return out, nil
}

// parseRetention reads --retain-until and --retention-mode: a mode needs a time, and
// the mode is Locked or Unlocked in any case (gcloud's spellings).
func parseRetention(until, mode string) (time.Time, string, error) {
	switch strings.ToLower(mode) {
	case "":
	case "locked":
		mode = "Locked"
	case "unlocked":
		mode = "Unlocked"
	default:
		return time.Time{}, "", usagef("--retention-mode %q: use Locked or Unlocked", mode)
	}
	if until == "" {
		if mode != "" {
			return time.Time{}, "", usagef("--retention-mode needs --retain-until DATETIME")
		}
		return time.Time{}, "", nil
	}
	t, err := time.Parse(time.RFC3339, until)
	if err != nil {
		return time.Time{}, "", usagef("--retain-until %q: give an RFC 3339 time, e.g. 2030-01-01T00:00:00Z", until)
	}
	if mode == "" {
		mode = "Unlocked"
	}
	return t, mode, nil
}

// triBool is a bool flag that knows whether it was given: meta set changes only the
// holds it is told to.
type triBool struct {
	set, val bool
	to       bool // the value the flag sets when given bare
}

func (b *triBool) Set(s string) error {
	var v boolValue
	if err := v.Set(s); err != nil {
		return err
	}
	b.set, b.val = true, bool(v) == b.to
	return nil
}
func (b *triBool) String() string   { return fmt.Sprint(b != nil && b.val) }
func (b *triBool) IsBoolFlag() bool { return true }

// metaHoldFlags are meta set's changes to holds and retention, as gcloud storage objects
// update spells them.
type metaHoldFlags struct {
	temporary, eventBased triBool
	retainUntil, mode     string
	clearRetention        bool
	override              bool
}

func (m *metaHoldFlags) register(fs *flagSet) {
	m.temporary.to, m.eventBased.to = true, true
	fs.Group("Retention and holds")
	fs.add(&m.temporary, "temporary-hold", "", "", "place the objects under a temporary hold")
	fs.add(&triBool{to: false}, "no-temporary-hold", "", "", "release the objects' temporary hold")
	fs.add(&m.eventBased, "event-based-hold", "", "", "place the objects under an event-based hold")
	fs.add(&triBool{to: false}, "no-event-based-hold", "", "", "release the objects' event-based hold")
	fs.String(&m.retainUntil, "retain-until", "", "DATETIME", "set or extend retention until DATETIME (RFC 3339)\n"+"set or extend the objects' retention until DATETIME (RFC 3339)")
	fs.String(&m.mode, "retention-mode", "", "MODE", "Unlocked (default) or Locked (irreversible)\n"+"with --retain-until: Unlocked (default) or Locked (irreversible)")
	fs.Bool(&m.clearRetention, "clear-retention", "", "remove the objects' Unlocked retention\n"+"remove the objects' Unlocked retention (needs --override-unlocked-retention)")
	fs.Bool(&m.override, "override-unlocked-retention", "", "allow shortening, locking or removing Unlocked retention\n"+"allow shortening, locking or removing an Unlocked retention (GCS's overrideUnlockedRetention)")
}

// bind ties the --no-* flags to their holds once the flags are parsed; a hold both
// placed and released is a usage error.
func (m *metaHoldFlags) bind(fs *flagSet) error {
	for name, dst := range map[string]*triBool{"temporary-hold": &m.temporary, "event-based-hold": &m.eventBased} {
		f := fs.fs.Lookup("no-" + name)
		if f == nil {
			continue
		}
		v := f.Value.(*triBool)
		switch {
		case !v.set:
		case dst.set && dst.val != v.val:
			return usagef("--%s and --no-%s: give one", name, name)
		default:
			*dst = *v
		}
	}
	return nil
}

// apply adds the hold changes to up; ok reports whether there was any.
func (m *metaHoldFlags) apply(up *storage.ObjectAttrsToUpdate) (ok bool, err error) {
	if m.temporary.set {
		up.TemporaryHold, ok = m.temporary.val, true
	}
	if m.eventBased.set {
		up.EventBasedHold, ok = m.eventBased.val, true
	}
	t, mode, err := parseRetention(m.retainUntil, m.mode)
	switch {
	case err != nil:
		return false, err
	case m.clearRetention && !t.IsZero():
		return false, usagef("--clear-retention and --retain-until: give one")
	case m.clearRetention:
		up.Retention, ok = &storage.ObjectRetention{}, true
	case !t.IsZero():
		up.Retention, ok = &storage.ObjectRetention{Mode: mode, RetainUntil: t}, true
	}
	return ok, nil
}

// retainedTally counts the transfers and deletes GCS refused because their object is
// under a hold or a retention, so a batch says so once, at its end, not once per file.
type retainedTally struct {
	mu    sync.Mutex
	n     int
	first error
}

// add counts r when GCS refused it for a hold or a retention, and reports whether it did.
func (t *retainedTally) add(r *upload.Result) bool {
	if r == nil || !upload.IsRetained(r.Err) {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	if t.first == nil {
		t.first = r.Err
	}
	return true
}

// line is the one line a batch prints about them ("" for none).
func (t *retainedTally) line() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == 0 {
		return ""
	}
	what := "1 object is"
	if t.n > 1 {
		what = fmt.Sprintf("%d objects are", t.n)
	}
	msg := t.first.Error()
	if i := strings.Index(msg, "Object '"); i >= 0 {
		msg = msg[i:]
	}
	return fmt.Sprintf("%s under a hold or retention: GCS refused to delete or replace them, and they were left as they are (not retried). "+
		"Release a hold with 'gcsput meta set --no-temporary-hold' or '--no-event-based-hold'; a retention lasts until its time. First: %s", what, msg)
}
