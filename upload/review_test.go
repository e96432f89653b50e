package upload_test

// Regression tests of the adversarial pass over issue 33's first round: what
// the user asked of a destination travels whole through every path.

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/upload"
)

// --if-generation-match names one object's generation: a wildcard that
// matches several sources (gs:// or local) is refused before anything is
// written, as two operands are, instead of the one generation being the
// precondition of every copy (which would overwrite the destination whose
// generation it happens to be).
func TestCopyAllIfGenerationMatchRefusesWildcardOfSeveral(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	srv.PutObject("src", "d/a.txt", []byte("new a"))
	srv.PutObject("src", "d/b.txt", []byte("new b"))
	old, err := srv.PutObject("dst", "w/a.txt", []byte("old a"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a.txt": "local a", "b.txt": "local b"})
	gen := old.Generation
	for _, src := range []string{"gs://src/d/*.txt", filepath.Join(dir, "*.txt")} {
		_, err := c.CopyAll(ctx, []string{src}, "gs://dst/w/", upload.CopyAllOptions{IfGenerationMatch: &gen})
		if !errors.Is(err, upload.ErrBadOperand) || !strings.Contains(err.Error(), "--if-generation-match applies to one file or object, and "+src+" matches 2 sources") {
			t.Errorf("CopyAll(%s, IfGenerationMatch %d) = %v; want an ErrBadOperand naming --if-generation-match and the pattern", src, gen, err)
		}
		same(t, "gs://dst after "+src, objects(t, srv, "dst"), []string{"w/a.txt=old a"})
	}
}
