package fakegcs

import (
	"encoding/json"
	"net/url"
	"time"

	raw "google.golang.org/api/storage/v1"
)

// ObjectRetention is an object's own retention configuration (object
// retention lock), set on a bucket created with enableObjectRetention: until
// RetainUntil the object can be neither deleted nor replaced. Mode is
// "Unlocked" (the configuration may be shortened or removed with
// overrideUnlockedRetention=true) or "Locked" (it may only be extended).
type ObjectRetention struct {
	Mode        string
	RetainUntil time.Time
}

// objectRetentionResource is the Object resource's retention member.
type objectRetentionResource struct {
	Mode            string `json:"mode"`
	RetainUntilTime string `json:"retainUntilTime"`
}

func retentionResource(r *ObjectRetention) *objectRetentionResource {
	if r == nil {
		return nil
	}
	return &objectRetentionResource{Mode: r.Mode, RetainUntilTime: formatTime(r.RetainUntil)}
}

// retentionFromRaw is the retention an Object resource asks for, nil for
// none. A time that does not parse is kept as the zero time, which
// checkNewRetention refuses.
func retentionFromRaw(r *raw.ObjectRetention) *ObjectRetention {
	if r == nil || (r.Mode == "" && r.RetainUntilTime == "") {
		return nil
	}
	t, _ := time.Parse(time.RFC3339Nano, r.RetainUntilTime)
	return &ObjectRetention{Mode: r.Mode, RetainUntil: t}
}

// checkNewRetention validates a retention configuration a write or patch
// sets on an object of b; s.mu is held. GCS accepts one only on a bucket
// created with object retention enabled.
func (s *Server) checkNewRetention(b *bucket, r *ObjectRetention) *apiError {
	switch {
	case r == nil:
		return nil
	case !b.objectRetention:
		return errf(400, "invalid", "Object retention cannot be set on objects of bucket %s: it was not created with object retention enabled (enableObjectRetention=true).", b.name)
	case r.Mode != "Locked" && r.Mode != "Unlocked":
		return errf(400, "invalid", "Invalid value for retention.mode: %q; it must be Locked or Unlocked.", r.Mode)
	case r.RetainUntil.IsZero():
		return errf(400, "invalid", "Invalid value for retention.retainUntilTime: an RFC 3339 time is required.")
	case !r.RetainUntil.After(s.now()):
		return errf(400, "invalid", "Invalid value for retention.retainUntilTime: %s is not in the future.", formatTime(r.RetainUntil))
	}
	return nil
}

// retentionTimeFormat is how GCS's refusals write a retain-until time:
// RFC 3339 with microseconds (as measured: "until
// 2026-09-30T15:58:01.185839-07:00"); fakegcs writes it in UTC.
const retentionTimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// retained is GCS's 403 for deleting or replacing o (nil: none) while a
// hold or a retention keeps it; nil otherwise. The texts and reasons are
// GCS's own, as its JSON API answers them: holds first ("forbidden"), then
// the object's retention and the bucket's policy ("retentionPolicyNotMet",
// with the later of the two times). s.mu is held.
func (s *Server) retained(b *bucket, o *object) *apiError {
	if o == nil {
		return nil
	}
	a := &o.attrs
	switch {
	case a.TemporaryHold:
		return errf(403, "forbidden", "Object '%s/%s' is under active Temporary hold and cannot be deleted, overwritten or archived until hold is removed.", b.name, a.Name)
	case a.EventBasedHold:
		return errf(403, "forbidden", "Object '%s/%s' is under active Event-Based hold and cannot be deleted, overwritten or archived until hold is removed.", b.name, a.Name)
	}
	var until time.Time
	if b.retention != nil && b.retention.period > 0 {
		until = a.Created.Add(time.Duration(b.retention.period) * time.Second)
	}
	if a.Retention != nil && a.Retention.RetainUntil.After(until) {
		until = a.Retention.RetainUntil
	}
	if s.now().Before(until) {
		return errf(403, "retentionPolicyNotMet", "Object '%s/%s' is subject to bucket's retention policy or object retention and cannot be deleted or overwritten until %s",
			b.name, a.Name, until.UTC().Format(retentionTimeFormat))
	}
	return nil
}

// holdsPatch is what a patch or update body asks of an object's holds and
// retention; nil fields are not changed.
type holdsPatch struct {
	temporary, eventBased *bool
	setRetention          bool
	retention             *ObjectRetention // nil with setRetention: remove it
}

// parseHolds reads temporaryHold, eventBasedHold and retention from a patch
// or update body. An update (replace) sets absent holds to false, as it
// replaces all writable metadata; an absent retention is kept either way.
func parseHolds(fields map[string]json.RawMessage, replace bool) (holdsPatch, *apiError) {
	var p holdsPatch
	for name, dst := range map[string]**bool{"temporaryHold": &p.temporary, "eventBasedHold": &p.eventBased} {
		v, ok := fields[name]
		if !ok {
			if replace {
				*dst = new(bool)
			}
			continue
		}
		var b *bool
		if err := json.Unmarshal(v, &b); err != nil {
			return p, errf(400, "invalid", "Invalid value for %s", name)
		}
		if b == nil {
			b = new(bool)
		}
		*dst = b
	}
	if v, ok := fields["retention"]; ok {
		var r *raw.ObjectRetention
		if err := json.Unmarshal(v, &r); err != nil {
			return p, errf(400, "invalid", "Invalid value for retention")
		}
		p.setRetention, p.retention = true, retentionFromRaw(r)
	}
	return p, nil
}

// applyHolds changes o's holds and retention as p says, under GCS's rules
// for object retention: a Locked configuration can only be extended, never
// shortened, unlocked or removed; an Unlocked one can be extended, and
// shortened, locked or removed only with overrideUnlockedRetention=true.
// s.mu is held.
func (s *Server) applyHolds(b *bucket, o *object, p holdsPatch, q url.Values) *apiError {
	if p.setRetention {
		if apiErr := s.changeRetention(b, o, p.retention, q.Get("overrideUnlockedRetention") == "true"); apiErr != nil {
			return apiErr
		}
	}
	if p.temporary != nil {
		o.attrs.TemporaryHold = *p.temporary
	}
	if p.eventBased != nil {
		o.attrs.EventBasedHold = *p.eventBased
	}
	return nil
}

func (s *Server) changeRetention(b *bucket, o *object, want *ObjectRetention, override bool) *apiError {
	old := o.attrs.Retention
	if want != nil {
		if apiErr := s.checkNewRetention(b, want); apiErr != nil {
			return apiErr
		}
	}
	name := b.name + "/" + o.attrs.Name
	active := old != nil && s.now().Before(old.RetainUntil)
	switch {
	case !active:
	case old.Mode == "Locked" && want == nil:
		return errf(403, "forbidden", "Object '%s' has a Locked retention configuration, which cannot be removed until %s.", name, old.RetainUntil.UTC().Format(retentionTimeFormat))
	case old.Mode == "Locked" && want.Mode != "Locked":
		return errf(403, "forbidden", "Object '%s' has a Locked retention configuration, which cannot be unlocked.", name)
	case old.Mode == "Locked" && want.RetainUntil.Before(old.RetainUntil):
		return errf(403, "forbidden", "Object '%s' has a Locked retention configuration, whose retain-until time %s cannot be reduced.", name, old.RetainUntil.UTC().Format(retentionTimeFormat))
	case override:
	case want == nil || want.Mode != old.Mode || want.RetainUntil.Before(old.RetainUntil):
		return errf(403, "forbidden", "Object '%s' has an Unlocked retention configuration: removing it, reducing its retain-until time or locking it needs overrideUnlockedRetention=true.", name)
	}
	o.attrs.Retention = want
	return nil
}
