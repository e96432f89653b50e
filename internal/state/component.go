package state

import (
	"fmt"

	"github.com/gcsput/gcsput/resumable"
)

// MaxComponents is the most components of one composite upload: what one
// compose request takes (GCS's limit).
const MaxComponents = resumable.MaxComposeSources

// Component is one part of a parallel composite upload: the source's bytes
// [Start, End), uploaded as the temporary object Name in the destination's
// bucket. While it is in flight, Session is its resumable session (a
// credential, like Upload.Session); once uploaded, Session is nil and
// Generation and CRC32C are the object's.
type Component struct {
	Name    string             `json:"name"`
	Start   int64              `json:"start"`
	End     int64              `json:"end"`
	Session *resumable.Session `json:"session,omitempty"`
	// Generation is the uploaded component's generation, 0 until then.
	Generation int64 `json:"generation,omitempty"`
	// CRC32C is the uploaded component's checksum (Castagnoli), meaningful
	// once Generation is set.
	CRC32C uint32 `json:"crc32c,omitempty"`
}

// Done reports whether the component is uploaded.
func (c Component) Done() bool { return c.Generation > 0 }

// CheckComponents reports whether comps can be continued as a composite
// upload of size bytes into bucket: 2 to MaxComponents components that
// cover [0, size) in order; each either uploaded (a generation, no session)
// or not (no generation), and a session, if any, for exactly that
// component's object and length. A record is untrusted input: anything
// else is refused. The names themselves are the caller's to check.
func CheckComponents(comps []Component, size int64, bucket string) error {
	if n := len(comps); n < 2 || n > MaxComponents {
		return fmt.Errorf("%d components (a composite upload has 2 to %d)", n, MaxComponents)
	}
	if err := checkCover("component", len(comps), func(i int) (int64, int64) { return comps[i].Start, comps[i].End }, size); err != nil {
		return err
	}
	for i, c := range comps {
		switch {
		case c.Generation < 0 || c.Generation > 0 && c.Session != nil:
			return fmt.Errorf("component %d is both uploaded and in flight", i)
		case c.Session != nil && (c.Session.Bucket != bucket || c.Session.Object != c.Name || c.Session.Size != c.End-c.Start):
			return fmt.Errorf("component %d's session is not for %d bytes of gs://%s/%s", i, c.End-c.Start, bucket, c.Name)
		}
	}
	return nil
}
