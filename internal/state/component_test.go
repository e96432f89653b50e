package state

import (
	"strings"
	"testing"

	"github.com/gcsput/gcsput/resumable"
)

// A composite record read from disk is continued only if its components
// cover the file in order, each uploaded or not, with a session for exactly
// its own object and length.
func TestCheckComponents(t *testing.T) {
	sess := func(object string, size int64) *resumable.Session {
		return &resumable.Session{URI: "http://127.0.0.1:1/u?upload_id=X", Bucket: "b", Object: object, Size: size, ChunkSize: 256 << 10}
	}
	good := func() []Component {
		return []Component{
			{Name: "t/0", Start: 0, End: 10, Generation: 5, CRC32C: 7},
			{Name: "t/1", Start: 10, End: 20, Session: sess("t/1", 10)},
			{Name: "t/2", Start: 20, End: 25},
		}
	}
	if err := CheckComponents(good(), 25, "b"); err != nil {
		t.Fatalf("good plan refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		mod  func([]Component) []Component
		size int64
		want string
	}{
		{"one component", func(c []Component) []Component { return c[:1] }, 10, "1 components"},
		{"33 components", func(c []Component) []Component { return make([]Component, 33) }, 25, "33 components"},
		{"gap", func(c []Component) []Component { c[1].Start = 11; return c }, 25, "component 1 (11-20) does not continue the plan at 10"},
		{"empty component", func(c []Component) []Component { c[2].End = 20; return c }, 20, "component 2 (20-20)"},
		{"short of the size", func(c []Component) []Component { return c }, 26, "cover 25 bytes of 26"},
		{"done and in flight", func(c []Component) []Component { c[0].Session = sess("t/0", 10); return c }, 25, "both uploaded and in flight"},
		{"session of another object", func(c []Component) []Component { c[1].Session = sess("elsewhere", 10); return c }, 25, "component 1's session is not for 10 bytes of gs://b/t/1"},
		{"session of another length", func(c []Component) []Component { c[1].Session = sess("t/1", 11); return c }, 25, "not for 10 bytes"},
		{"session in another bucket", func(c []Component) []Component { c[1].Session.Bucket = "other"; return c }, 25, "not for 10 bytes of gs://b/t/1"},
	} {
		err := CheckComponents(tc.mod(good()), tc.size, "b")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error with %q", tc.name, err, tc.want)
		}
	}
}

// A component session on another host than the endpoint makes the whole
// record untrusted: none of its sessions is contacted.
func TestComponentSessionOrigin(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	s.Warn = func(m string) { warned = append(warned, m) }
	r := &Record{Kind: KindUpload, Source: "/f", Dest: "gs://b/o", Upload: &Upload{Components: []Component{
		{Name: "t/0", End: 1, Session: &resumable.Session{URI: "http://127.0.0.1:1/u?upload_id=X"}},
		{Name: "t/1", Start: 1, End: 2, Session: &resumable.Session{URI: "https://evil.example/u?upload_id=Y"}},
	}}}
	if s.Trusted(r, "http://127.0.0.1:1") {
		t.Fatal("a record with a component session on another host is trusted")
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "component 1: its session is on https://evil.example") || strings.Contains(warned[0], "upload_id") {
		t.Errorf("warnings %q", warned)
	}
	r.Upload.Components[1].Session.URI = "http://127.0.0.1:1/u?upload_id=Y"
	if !s.Trusted(r, "http://127.0.0.1:1") {
		t.Error("a record whose sessions are all on the endpoint is not trusted")
	}
}

func TestCheckSlices(t *testing.T) {
	ok := []Slice{{Start: 0, End: 10, Done: 4}, {Start: 10, End: 25, Done: 25}}
	if err := CheckSlices(ok, 25); err != nil {
		t.Fatalf("a good plan: %v", err)
	}
	for _, tc := range []struct {
		plan []Slice
		size int64
		want string
	}{
		{nil, 25, "the slices cover 0 bytes of 25"},
		{ok, 26, "the slices cover 25 bytes of 26"},
		{[]Slice{{Start: 0, End: 10}, {Start: 11, End: 25, Done: 11}}, 25, "slice 1 (11-25) does not continue the plan at 10"},
		{[]Slice{{Start: 0, End: 10, Done: 11}, {Start: 10, End: 25, Done: 10}}, 25, "slice 0 (0-10) is done to 11, outside it"},
		{[]Slice{{Start: 0, End: 10, Done: -1}, {Start: 10, End: 25, Done: 10}}, 25, "slice 0 (0-10) is done to -1, outside it"},
	} {
		if err := CheckSlices(tc.plan, tc.size); err == nil || err.Error() != tc.want {
			t.Errorf("%v of %d: %v, want %q", tc.plan, tc.size, err, tc.want)
		}
	}
}
