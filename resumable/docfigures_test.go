package resumable

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// The buffer a download copies through is a figure the docs give (upload's package doc,
// docs/library.md): each must be the size copyBufs hands out.
func TestDocsCopyBufferSize(t *testing.T) {
	t.Parallel()
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	size := len(*bp)
	re := regexp.MustCompile(`a download uses a\s+(?://\s+)?(\d+) KiB\s+(?://\s+)?copy buffer`)
	found := 0
	for _, f := range []string{"../upload/doc.go", "../docs/library.md", "../README.md", "../docs/performance.md"} {
		b, err := os.ReadFile(filepath.FromSlash(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			found++
			if n, _ := strconv.Atoi(m[1]); n<<10 != size {
				t.Errorf("%s says %q; downloads copy through %d KiB", f, m[0], size>>10)
			}
		}
	}
	if found < 2 {
		t.Errorf("found the copy buffer's size %d times, want it in upload/doc.go and docs/library.md", found)
	}
}
