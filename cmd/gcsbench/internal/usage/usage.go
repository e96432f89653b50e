// Package usage holds what gcsbench and its cmdusage program say to each
// other: the command to run and the report of how it ran. It imports
// nothing, so cmdusage stays a small process (see its package comment).
package usage

// Spec is one command to run: cmdusage's input.
type Spec struct {
	Args []string `json:"args"` // Args[0] is the executable
	// Stdout and Stderr are files that receive the command's output.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// Result is cmdusage's report of the command.
type Result struct {
	// Start and End are Unix nanoseconds just before the command started and
	// just after it was reaped; Seconds is the time between, its process's
	// start and exit included, as a user of the CLI pays them.
	Start   int64   `json:"start"`
	End     int64   `json:"end"`
	Seconds float64 `json:"seconds"`
	CPU     float64 `json:"cpu"` // user + system seconds
	// PeakRSS is the command's ru_maxrss in bytes: its own peak, unless
	// cmdusage's own (OwnRSS, about 3 MiB) is larger.
	PeakRSS  int64  `json:"peak_rss"`
	OwnRSS   int64  `json:"own_rss"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"` // why it did not run, or did not exit by itself
}
