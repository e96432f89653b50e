package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// A Split records how a job was divided among workers (--shard I/N): a
// worker that starts again in the same state directory, re-run on its own
// by a batch engine that then describes a smaller array, must not take the
// job's tree as if it were the whole job. Unlike a session record, a split
// is kept after the job ends: it is what a later re-run is checked against.
type Split struct {
	Shards int    `json:"shards"` // N: how many workers share the job
	Job    string `json:"job"`    // the job, for messages
}

// splitsDir holds one file per job, named by the job's ID.
const splitsDir = "splits"

// LoadSplit returns the split recorded for job (a hex ID), and false when
// there is none or it cannot be trusted (the same checks as a record's).
func (s *Store) LoadSplit(job string) (Split, bool) {
	if !isHexID(job) {
		return Split{}, false
	}
	b, err := s.read(filepath.Join(splitsDir, job))
	if err != nil {
		return Split{}, false
	}
	var sp Split
	if json.Unmarshal(b, &sp) != nil || sp.Shards < 1 {
		return Split{}, false
	}
	return sp, true
}

// SaveSplit records job's split, replacing any earlier one.
func (s *Store) SaveSplit(job string, sp Split) error {
	if !isHexID(job) {
		return fmt.Errorf("job id %q: want hex digits", job)
	}
	if sp.Shards < 1 {
		return errors.New("a split has at least one shard")
	}
	dir := filepath.Join(s.Dir, splitsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	b, _ := json.Marshal(sp)
	return writeAtomic(dir, job+".json", b)
}

func isHexID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
