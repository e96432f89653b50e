package jobrec

import (
	"sync"
	"testing"

	"github.com/gcsput/gcsput/upload"
)

// A transfer is keyed by its gs:// end, named by its local one; its size
// goes into the total once, never when the caller counted it ahead; Done
// forgets it.
func TestTracker(t *testing.T) {
	tr := NewTracker()
	up := upload.Progress{Source: "photos/a.jpg", Dest: "gs://b/a.jpg", Size: 10}
	if name, first := tr.Progress(up); name != "photos/a.jpg" || !first {
		t.Errorf("first report of an upload: %q, first %v; want photos/a.jpg, true", name, first)
	}
	if name, first := tr.Progress(up); name != "photos/a.jpg" || first {
		t.Errorf("second report: %q, first %v; want photos/a.jpg, false", name, first)
	}
	if tr.Down("gs://b/a.jpg") || tr.Name("gs://b/a.jpg") != "photos/a.jpg" {
		t.Errorf("upload: down %v, name %q", tr.Down("gs://b/a.jpg"), tr.Name("gs://b/a.jpg"))
	}
	down := upload.Progress{Source: "gs://b/big", Dest: "-", Size: 5}
	if name, first := tr.Progress(down); name != "gs://b/big" || !first || !tr.Down("gs://b/big") {
		t.Errorf("download to stdout: %q, first %v, down %v; want its URL, true, true", name, first, tr.Down("gs://b/big"))
	}
	tr.Expect("gs://b/c", "saved/c")
	if name, first := tr.Progress(upload.Progress{Source: "c.partial", Dest: "gs://b/c"}); name != "saved/c" || first {
		t.Errorf("expected transfer: %q, first %v; want the name given, false", name, first)
	}
	tr.Done("gs://b/a.jpg")
	if n := tr.Name("gs://b/a.jpg"); n != "gs://b/a.jpg" {
		t.Errorf("after Done: name %q, want the URL", n)
	}
	if Key("gs://a/x", "gs://b/x") != "gs://a/x" || Key("x", "gs://b/x") != "gs://b/x" || Key("gs://b/x", "x") != "gs://b/x" {
		t.Error("Key does not take the gs:// end, the source of a copy")
	}

	all := NewTracker()
	all.ExpectAll()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if _, first := all.Progress(upload.Progress{Source: string(rune('a' + i)), Dest: "gs://b/" + string(rune('a'+i))}); first {
				t.Errorf("a size counted ahead was counted again")
			}
		})
	}
	wg.Wait()
}
