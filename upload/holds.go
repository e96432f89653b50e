package upload

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	raw "google.golang.org/api/storage/v1"

	"github.com/gcsput/gcsput/resumable"
)

// Holds are what keeps a written object from being deleted or replaced:
// GCS's temporary and event-based holds, and an object retention until a
// time. They are a property of the destination, like its key: every path
// that writes it (upload, resume, copy, compose, sync, mv) takes them whole,
// and a saved transfer records them. The zero value asks for none (a
// bucket's defaultEventBasedHold still applies).
type Holds struct {
	// TemporaryHold and EventBasedHold create the object under that hold,
	// released with Client.Update.
	TemporaryHold  bool `json:"temporary_hold,omitempty"`
	EventBasedHold bool `json:"event_based_hold,omitempty"`
	// RetainUntil, when not zero, gives the object a retention until then
	// (the bucket must have been created with object retention enabled).
	// RetentionMode is "Unlocked" (the default: it may be shortened or
	// removed with an override) or "Locked" (it may only be extended,
	// never removed, by anyone).
	RetainUntil   time.Time `json:"retain_until,omitzero"`
	RetentionMode string    `json:"retention_mode,omitempty"`
}

// none reports whether h asks for nothing. (Not IsZero: Attrs embeds Holds,
// and encoding/json's omitzero would take a promoted IsZero for Attrs'.)
func (h Holds) none() bool { return h == Holds{} }

// Check refuses holds GCS would refuse: a mode without a time, a mode other
// than Locked or Unlocked.
func (h Holds) Check() error {
	switch {
	case h.RetainUntil.IsZero() && h.RetentionMode != "":
		return fmt.Errorf("%w: a retention mode (%s) needs a retain-until time", ErrBadOption, h.RetentionMode)
	case h.RetentionMode != "" && h.RetentionMode != "Locked" && h.RetentionMode != "Unlocked":
		return fmt.Errorf("%w: retention mode %q: it is Locked or Unlocked", ErrBadOption, h.RetentionMode)
	}
	return nil
}

// apply sets h on an upload's, a copy's or a compose's destination spec.
func (h Holds) apply(sp *resumable.ObjectSpec) {
	sp.TemporaryHold, sp.EventBasedHold, sp.RetainUntil = h.TemporaryHold, h.EventBasedHold, h.RetainUntil
	sp.RetentionMode = ""
	if !h.RetainUntil.IsZero() {
		sp.RetentionMode = h.mode()
	}
}

func (h Holds) mode() string {
	if h.RetentionMode == "" {
		return "Unlocked"
	}
	return h.RetentionMode
}

// ErrRetained is matched (errors.Is) by the error of a delete or a write
// that GCS refused because the object is under a hold or a retention (its
// 403 "retentionPolicyNotMet", or "forbidden" naming a hold). Such a refusal
// is final: it is never retried, and the object stays as it is.
var ErrRetained = errors.New("the object is under a hold or retention")

// retainedError wraps err with ErrRetained when it is GCS's refusal of a
// retained or held object; other errors are returned as they are.
func retainedError(err error) error {
	if err != nil && isRetained(err) && !errors.Is(err, ErrRetained) {
		return fmt.Errorf("%w: %w", ErrRetained, err)
	}
	return err
}

// IsRetained reports whether err is GCS's refusal of a delete or a write
// of an object under a hold or a retention: ErrRetained, or its JSON API's
// 403 (reason "retentionPolicyNotMet", or a message naming an active hold),
// however the transfer wrapped it.
func IsRetained(err error) bool {
	return err != nil && (errors.Is(err, ErrRetained) || isRetained(err))
}

func isRetained(err error) bool {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		if ge.Code != http.StatusForbidden {
			return false
		}
		for _, e := range ge.Errors {
			if e.Reason == "retentionPolicyNotMet" || e.Reason == "objectUnderActiveHold" {
				return true
			}
		}
		return heldMessage(ge.Message)
	}
	// An upload's refusal reaches us as the resumable package's error,
	// which keeps GCS's status and words.
	s := err.Error()
	return strings.Contains(s, "403") && (strings.Contains(s, "retentionPolicyNotMet") || heldMessage(s))
}

// heldMessage reports whether a GCS message is its refusal for a hold or a
// retention: "… is under active Temporary hold and cannot be deleted …",
// "… is subject to bucket's retention policy or object retention and cannot
// be deleted or overwritten until …".
func heldMessage(m string) bool {
	return containsAll(m, "is under active ", " hold ") || containsAll(m, "retention", "cannot be deleted")
}

// UpdateOptions are the choices of [Client.Update]; the zero value
// patches with none.
type UpdateOptions struct {
	// OverrideUnlockedRetention allows shortening, locking or removing an
	// Unlocked object retention (GCS's overrideUnlockedRetention); a
	// Locked one can only be extended either way.
	OverrideUnlockedRetention bool
}

// patchHolds adds up's holds and retention to a raw patch.
func patchHolds(o *raw.Object, up storage.ObjectAttrsToUpdate) {
	if up.TemporaryHold != nil {
		o.TemporaryHold = up.TemporaryHold.(bool)
		o.ForceSendFields = append(o.ForceSendFields, "TemporaryHold")
	}
	if up.EventBasedHold != nil {
		o.EventBasedHold = up.EventBasedHold.(bool)
		o.ForceSendFields = append(o.ForceSendFields, "EventBasedHold")
	}
	switch r := up.Retention; {
	case r == nil:
	case r.Mode == "" && r.RetainUntil.IsZero():
		o.NullFields = append(o.NullFields, "Retention")
	default:
		o.Retention = &raw.ObjectRetention{Mode: r.Mode, RetainUntilTime: r.RetainUntil.UTC().Format(time.RFC3339)}
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
