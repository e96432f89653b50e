package jobrec

import (
	"sync"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/upload"
)

// Tracker keeps what a job's lines need to know of each transfer in flight,
// keyed by its gs:// end (see Key): the name people know it by (the local
// path), whether its size is already in the progress total, whether it is a
// download. The library's callbacks call it from many workers at once; Done
// forgets a transfer, so a million-file run keeps nothing per file.
type Tracker struct {
	mu      sync.Mutex
	names   map[string]string // gs:// URL -> the name people know it by
	downs   map[string]bool   // gs:// URLs being downloaded
	started map[string]bool   // transfers whose size is already in the total
	// allAhead says every transfer's size is already in the total (ExpectAll).
	allAhead bool
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker {
	return &Tracker{names: map[string]string{}, downs: map[string]bool{}, started: map[string]bool{}}
}

// Key is the gs:// end of a transfer from source to dest (the source when
// both are): what a progress report and a result of one transfer share.
func Key(source, dest string) string {
	if naming.IsRemote(source) {
		return source
	}
	return dest
}

// Expect names the transfer of url, whose size the caller put in the total
// before it started.
func (t *Tracker) Expect(url, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.names[url] = name
	t.started[url] = true
}

// ExpectAll says the caller put every transfer's size in the total before
// any started (a sync's plan knows them): no report adds one again.
func (t *Tracker) ExpectAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.allAhead = true
}

// Progress records a progress report: the transfer's name, and first when
// its size is not in the total yet (the caller adds it, once).
func (t *Tracker) Progress(p upload.Progress) (name string, first bool) {
	url, local, down := p.Dest, p.Source, naming.IsRemote(p.Source)
	if down {
		url, local = p.Source, p.Dest
	}
	t.mu.Lock()
	t.downs[url] = down
	first = !t.started[url] && !t.allAhead
	t.started[url] = true
	if _, ok := t.names[url]; !ok && local != "" && local != "-" {
		t.names[url] = local
	}
	name = t.names[url]
	t.mu.Unlock()
	if name == "" {
		name = url
	}
	return name, first
}

// Name is what to call the transfer of url in lines people read: the
// name it was given or reported with, else url.
func (t *Tracker) Name(url string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n, ok := t.names[url]; ok {
		return n
	}
	return url
}

// Down reports whether url is being downloaded, as its last report said.
func (t *Tracker) Down(url string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.downs[url]
}

// Done forgets the transfer of url: it ended.
func (t *Tracker) Done(url string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.names, url)
	delete(t.started, url)
	delete(t.downs, url)
}
