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
	// Env is added to cmdusage's own environment for the command.
	Env []string `json:"env,omitempty"`
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
	PeakRSS  int64 `json:"peak_rss"`
	OwnRSS   int64 `json:"own_rss"`
	ExitCode int   `json:"exit_code"`
	// ReadBytes is what the command and the children it waited for read
	// from block devices (rusage ru_inblock × 512, the same count as
	// read_bytes in /proc/PID/io); -1 where it is not known.
	ReadBytes int64  `json:"read_bytes"`
	Error     string `json:"error,omitempty"` // why it did not run, or did not exit by itself
}
