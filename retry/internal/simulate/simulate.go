// Package simulate is a discrete-event model of the experiment in the AWS Architecture Blog's
// "Exponential Backoff And Jitter" (Marc Brooker, 2015), driving package retry's policies.
//
// N clients start together; each reads the version of one record and then writes it back
// conditionally (optimistic concurrency: the write succeeds only if the version it read is
// still current). Every message between a client and the server takes |Normal(10 ms, 2 ms)|.
// A client whose write lost backs off for its policy's wait and starts over with a read. The
// model counts the server's write calls (the "work") and the time the last client finishes.
//
// Time is simulated: the model never sleeps. All randomness — message times and the policies'
// Step.Rand — comes from one seeded source per run, so a run is exactly reproducible.
package simulate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/gcsput/gcsput/retry"
)

// Config describes an experiment. The zero value of a field takes the blog's figure.
type Config struct {
	Clients int           // clients contending for the record; 0 means 50
	Runs    int           // runs averaged; 0 means 100
	Seed    uint64        // seed of run i's random source is (Seed, i)
	Mean    time.Duration // mean one-way message time; 0 means 10 ms
	SD      time.Duration // its standard deviation; 0 means 2 ms
}

func (c Config) resolved() Config {
	if c.Clients == 0 {
		c.Clients = 50
	}
	if c.Runs == 0 {
		c.Runs = 100
	}
	if c.Mean == 0 {
		c.Mean = 10 * time.Millisecond
	}
	if c.SD == 0 {
		c.SD = 2 * time.Millisecond
	}
	return c
}

// Result is the average over a Config's runs.
type Result struct {
	Policy  string
	Clients int
	Calls   float64       // server write calls per run: the work
	Time    time.Duration // when the last client finished
}

// Named is a policy with the name the table shows.
type Named struct {
	Name   string
	Policy retry.Policy
}

// Blog returns the blog's policies with its parameters: base 5 ms, cap 2 s.
func Blog() []Named {
	base, capd := 5*time.Millisecond, 2*time.Second
	return []Named{
		{"No backoff", retry.Constant{Delay: -1}},
		{"Exponential", retry.Exponential{Base: base, Cap: capd}},
		{"Full jitter", retry.FullJitter{Base: base, Cap: capd}},
		{"Equal jitter", retry.EqualJitter{Base: base, Cap: capd}},
		{"Decorrelated jitter", retry.Decorrelated{Base: base, Cap: capd}},
	}
}

// Run averages cfg.Runs runs of the experiment with policy p.
func Run(cfg Config, p Named) Result {
	cfg = cfg.resolved()
	var calls int
	var total time.Duration
	for i := range cfg.Runs {
		c, t := runOnce(cfg, p.Policy, rand.New(rand.NewPCG(cfg.Seed, uint64(i))))
		calls += c
		total += t
	}
	return Result{
		Policy:  p.Name,
		Clients: cfg.Clients,
		Calls:   float64(calls) / float64(cfg.Runs),
		Time:    total / time.Duration(cfg.Runs),
	}
}

// Table runs every policy at every client count.
func Table(cfg Config, clients []int, policies []Named) []Result {
	var out []Result
	for _, n := range clients {
		for _, p := range policies {
			c := cfg
			c.Clients = n
			out = append(out, Run(c, p))
		}
	}
	return out
}

// Format renders results as a Markdown table.
func Format(rs []Result) string {
	var b strings.Builder
	b.WriteString("| clients | policy | write calls (work) | time to finish |\n")
	b.WriteString("|--:|---|--:|--:|\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %d | %s | %.0f | %.0f ms |\n", r.Clients, r.Policy, r.Calls, float64(r.Time)/float64(time.Millisecond))
	}
	return b.String()
}
