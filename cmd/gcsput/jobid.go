package main

import "github.com/gcsput/gcsput/internal/jobrec"

// jobIdentity names the job a run of cp or sync belongs to, in its --json
// summary (internal/jobrec): 'gcsput report' merges only outputs of one job,
// and a state directory remembers the split of each job it has seen (see
// checkSplit).
type jobIdentity = jobrec.Identity
