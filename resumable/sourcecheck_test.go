package resumable

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// changingSource is a file whose CheckSource fails once it was "edited".
type changingSource struct {
	*bytes.Reader
	checks  int
	changed bool
}

func (s *changingSource) CheckSource() error {
	s.checks++
	if s.changed {
		return errors.New("modification time changed")
	}
	return nil
}

// A source that says it changed is not finalized: the error matches
// ErrSourceChanged, the session holds the chunks sent before, and the
// object does not exist. A source that did not change is checked once,
// before the final chunk.
func TestUploadChecksSourceBeforeFinal(t *testing.T) {
	e := newEnv(t, kib256)
	ctx := context.Background()
	data := testData(3*kib256 + 100)
	for _, changed := range []bool{true, false} {
		src := &changingSource{Reader: bytes.NewReader(data), changed: changed}
		s, err := e.c.Start(ctx, ObjectSpec{Bucket: "bkt", Name: "o", Size: int64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.c.Upload(ctx, s, src)
		st, _ := e.srv.LastSession("bkt", "o")
		if !changed {
			if err != nil || src.checks != 1 || st.State != "finalized" {
				t.Fatalf("unchanged: err %v, %d checks, session %s", err, src.checks, st.State)
			}
			continue
		}
		var se *SourceError
		if !errors.Is(err, ErrSourceChanged) || !errors.As(err, &se) || !strings.Contains(err.Error(), "modification time changed") {
			t.Fatalf("err = %v, want ErrSourceChanged", err)
		}
		if src.checks != 1 || st.State != "active" || st.Persisted != 3*kib256 || st.Chunks != 3 {
			t.Fatalf("%d checks; session %+v: want 3 chunks persisted and not finalized", src.checks, st)
		}
		if _, _, err := e.srv.Object("bkt", "o"); err == nil {
			t.Fatal("the object was created from a changed source")
		}
	}
}
