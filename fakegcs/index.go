package fakegcs

import (
	"slices"
	"strings"
)

// objectIndex holds a bucket's live objects by name and keeps the names in
// byte order, so that a listing page seeks to where it starts and then
// costs time in proportion to the page, not to the bucket (GCS lists in
// that order: "a-b" < "a.b" < "a/" < "a0").
//
// The order is kept as a list of sorted runs of names, as Python's
// sortedcontainers keeps it: a name is found by a binary search over the
// runs' last names and one within a run, and an insert or delete moves at
// most maxRun names and a few run headers, never the whole bucket. Code
// outside this file uses its methods only: a map write that skipped the
// runs would leave the name out of every listing. It is guarded by
// Server.mu.
type objectIndex struct {
	byName map[string]*object
	runs   [][]string // each sorted and non-empty; every name of runs[i] < every name of runs[i+1]
}

// maxRun is the length at which a run is split in two.
const maxRun = 1024

func newObjectIndex() *objectIndex { return &objectIndex{byName: map[string]*object{}} }

// len is the number of objects.
func (ix *objectIndex) len() int { return len(ix.byName) }

// get returns the object called name, or nil.
func (ix *objectIndex) get(name string) *object { return ix.byName[name] }

// set makes o the object called name.
func (ix *objectIndex) set(name string, o *object) {
	if _, ok := ix.byName[name]; ok {
		ix.byName[name] = o
		return
	}
	ix.byName[name] = o
	if len(ix.runs) == 0 {
		ix.runs = append(ix.runs, []string{name})
		return
	}
	r := ix.runFor(name)
	if r == len(ix.runs) { // after every name: the last run grows
		r--
	}
	run := ix.runs[r]
	i, _ := slices.BinarySearch(run, name)
	run = slices.Insert(run, i, name)
	if len(run) < maxRun {
		ix.runs[r] = run
		return
	}
	// Split in two copies, so neither half pins the other's array.
	half := len(run) / 2
	lo, hi := slices.Clone(run[:half]), slices.Clone(run[half:])
	ix.runs[r] = lo
	ix.runs = slices.Insert(ix.runs, r+1, hi)
}

// remove deletes the object called name and returns it (nil if none).
func (ix *objectIndex) remove(name string) *object {
	o, ok := ix.byName[name]
	if !ok {
		return nil
	}
	delete(ix.byName, name)
	r := ix.runFor(name)
	run := ix.runs[r]
	i, _ := slices.BinarySearch(run, name)
	run = slices.Delete(run, i, i+1)
	if len(run) == 0 {
		ix.runs = slices.Delete(ix.runs, r, r+1)
	} else {
		ix.runs[r] = run
	}
	return o
}

// runFor is the index of the first run whose last name is >= key, or
// len(runs) when key sorts after every name.
func (ix *objectIndex) runFor(key string) int {
	lo, hi := 0, len(ix.runs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if run := ix.runs[m]; run[len(run)-1] < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// all returns every name in order (ObjectNames).
func (ix *objectIndex) all() []string {
	out := make([]string, 0, ix.len())
	for _, run := range ix.runs {
		out = append(out, run...)
	}
	return out
}

// indexCursor walks names in order from a seek. It is valid until the
// index changes (it is used under Server.mu only).
type indexCursor struct {
	ix   *objectIndex
	r, i int
}

// seek returns a cursor at the first name >= key.
func (ix *objectIndex) seek(key string) indexCursor {
	r := ix.runFor(key)
	c := indexCursor{ix: ix, r: r}
	if r < len(ix.runs) {
		c.i, _ = slices.BinarySearch(ix.runs[r], key)
	}
	return c
}

func (c *indexCursor) valid() bool  { return c.r < len(c.ix.runs) }
func (c *indexCursor) name() string { return c.ix.runs[c.r][c.i] }

func (c *indexCursor) next() {
	c.i++
	if c.i == len(c.ix.runs[c.r]) {
		c.r, c.i = c.r+1, 0
	}
}

// after is the least string greater than s in byte order: s and a NUL.
func after(s string) string { return s + "\x00" }

// pastPrefix is the least string greater than every string that starts
// with p, and ok false when there is none (p empty or all 0xff bytes): a
// seek there skips a whole rolled-up prefix in one step.
func pastPrefix(p string) (string, bool) {
	p = strings.TrimRight(p, "\xff")
	if p == "" {
		return "", false
	}
	return p[:len(p)-1] + string([]byte{p[len(p)-1] + 1}), true
}
