package objerr

import (
	"errors"
	"fmt"
	"testing"

	"cloud.google.com/go/storage"
)

func TestWords(t *testing.T) {
	cause := errors.New("boom")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{storage.ErrObjectNotExist, "gs://b/o: no such object"},
		{fmt.Errorf("stat: %w", storage.ErrBucketNotExist), `gs://b/o: no such bucket "b"`},
		{cause, "gs://b/o: boom"},
	} {
		err := New("b", "o", tc.err)
		if err.Error() != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("New(%v) = %q (wraps: %v), want %q wrapping the cause", tc.err, err, errors.Is(err, tc.err), tc.want)
		}
	}
	if New("b", "o", nil) != nil {
		t.Error("New(nil) is not nil")
	}
}
