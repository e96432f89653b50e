// Command backoffsim prints the contention table of package retry's policies: the AWS
// Architecture Blog's "Exponential Backoff And Jitter" experiment, replayed in a
// discrete-event model (see retry/internal/simulate).
//
//	go run ./retry/internal/cmd/backoffsim [-runs 100] [-seed 1] [-clients 50,100]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gcsput/gcsput/retry/internal/simulate"
)

func main() {
	fs := flag.NewFlagSet("backoffsim", flag.ContinueOnError)
	runs := fs.Int("runs", 100, "runs averaged per cell")
	seed := fs.Uint64("seed", 1, "random seed")
	clients := fs.String("clients", "50,100", "comma-separated client counts")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	var ns []int
	for _, s := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "backoffsim: bad client count %q\n", s)
			os.Exit(2)
		}
		ns = append(ns, n)
	}
	rs := simulate.Table(simulate.Config{Runs: *runs, Seed: *seed}, ns, simulate.Blog())
	fmt.Print(simulate.Format(rs))
}
