package listing

import (
	"context"
	"fmt"
	"iter"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/upload"
)

// Generation is one generation of an object; 0 means the one a request
// picks (for a restore, the one deleted last).
type Generation struct {
	URL        upload.URL
	Generation int64
}

// Restorable turns what 'gcsput restore' names into the generations to
// restore, in order: a named generation as given; a name alone, the one
// deleted last (Generation 0, which Restore finds), or with all each
// soft-deleted one, oldest first; a wildcard, each name it matches among
// the soft-deleted objects, likewise. A name or wildcard with nothing
// soft-deleted is an error matching upload.ErrNotSoftDeleted.
func Restorable(ctx context.Context, c *upload.Client, named []Generation, all bool) ([]Generation, error) {
	var out []Generation
	for _, t := range named {
		wild := upload.HasWildcard(t.URL.Object)
		if t.Generation != 0 || (!all && !wild) {
			out = append(out, t)
			continue
		}
		var seq iter.Seq2[*storage.ObjectAttrs, error]
		if wild {
			seq = c.Glob(ctx, t.URL, upload.GlobOptions{SoftDeleted: true})
		} else {
			seq = c.SoftDeleted(ctx, t.URL.Bucket, t.URL.Object, "")
		}
		n := 0
		for o, err := range seq {
			if err != nil {
				return nil, err
			}
			if !wild && o.Name != t.URL.Object {
				continue // a longer name under the same prefix
			}
			u := upload.URL{Bucket: t.URL.Bucket, Object: o.Name}
			switch {
			case all:
				out = append(out, Generation{u, o.Generation})
			case n == 0 || out[len(out)-1].URL != u:
				out = append(out, Generation{u, 0})
			}
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("%s: %w", t.URL, upload.ErrNotSoftDeleted)
		}
	}
	return out, nil
}
