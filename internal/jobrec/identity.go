package jobrec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gcsput/gcsput/internal/naming"
)

// Identity names the job a run of cp or sync belongs to, in its --json
// summary: 'gcsput report' merges only outputs of one job, and a state
// directory remembers the split of each job it has seen (see Tree).
type Identity struct {
	// ID is the first 16 hex digits of the SHA-256 of the JSON array
	// ["gcsput-job/1", command, sources, destination, shards, filters]:
	// the fields below, with every source, however many there are.
	ID          string   `json:"id"`
	Command     string   `json:"command"`           // cp or sync
	Sources     []string `json:"sources"`           // at most MaxSourcesNamed; local paths made absolute
	SourceCount int      `json:"source_count"`      // all of them (cp -I may give millions)
	Destination string   `json:"destination"`       // gs:// URL as given, or a local path made absolute
	Shards      int      `json:"shards"`            // N of --shard I/N; 1 when not sharded
	Filters     []string `json:"filters,omitempty"` // sync's rules in order: "include GLOB", then "exclude GLOB"
	// tree is the hash with shards 0: the same job split any way.
	tree string
}

// MaxSourcesNamed bounds the sources a summary lists; the ID covers all.
const MaxSourcesNamed = 20

// NewIdentity describes a job. Local operands are made absolute (a
// trailing "/" kept, since it changes names): two tasks that ran from other
// directories with the same relative path did not read the same tree.
func NewIdentity(command string, srcs []string, dst string, shards int, filters []string) *Identity {
	all := make([]string, len(srcs))
	for i, s := range srcs {
		all[i] = absOperand(s)
	}
	id := &Identity{Command: command, SourceCount: len(all), Destination: absOperand(dst),
		Shards: max(shards, 1), Filters: filters}
	id.ID, id.tree = id.hash(all, id.Shards), id.hash(all, 0)
	id.Sources = all[:min(len(all), MaxSourcesNamed)]
	return id
}

// Tree is the job's hash however it is split (shards 0): a state directory
// keeps the job's split under it. It is "" for an Identity read back from
// JSON.
func (id *Identity) Tree() string { return id.tree }

// absOperand is a local path made absolute, or a gs:// URL or "-" as given.
func absOperand(op string) string {
	if op == "-" || naming.IsRemote(op) {
		return op
	}
	abs, err := filepath.Abs(op)
	if err != nil {
		return op
	}
	if strings.HasSuffix(op, "/") && !strings.HasSuffix(abs, "/") {
		abs += "/"
	}
	return abs
}

// hash is the ID of the job with all its sources and split into shards.
func (id *Identity) hash(sources []string, shards int) string {
	b, _ := json.Marshal([]any{"gcsput-job/1", id.Command, sources, id.Destination, shards, id.Filters})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// String is the job for messages: "sync /data -> gs://b/p, 16 shards (id …)".
func (id *Identity) String() string {
	if id == nil {
		return "no job (an output of 'gcsput resume', or of a gcsput before jobs were named)"
	}
	srcs := strings.Join(id.Sources, " ")
	if id.SourceCount > len(id.Sources) {
		srcs += fmt.Sprintf(" and %d more", id.SourceCount-len(id.Sources))
	}
	shards := "1 shard"
	if id.Shards != 1 {
		shards = fmt.Sprintf("%d shards", id.Shards)
	}
	s := fmt.Sprintf("%s %s -> %s, %s", id.Command, srcs, id.Destination, shards)
	for _, f := range id.Filters {
		s += ", --" + f
	}
	return s + " (id " + id.ID + ")"
}

// Filters is sync's rules as an Identity keeps them: -x patterns as
// "exclude-regex R".
func Filters(include, exclude, excludeRE []string) []string {
	var out []string
	for _, g := range include {
		out = append(out, "include "+g)
	}
	for _, g := range exclude {
		out = append(out, "exclude "+g)
	}
	for _, r := range excludeRE {
		out = append(out, "exclude-regex "+r)
	}
	return out
}
