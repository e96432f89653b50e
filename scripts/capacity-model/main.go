// Command capacity-model is fakegcs behind a bucket that admits -rate object writes a
// second with -burst of burst and answers 429 beyond (GCS's message), each request delayed
// by -rtt: the model of issue 31, without TLS, that scripts/capacity-ab runs gcsput
// against. GET /_stats answers "WRITES REFUSED".
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/gcsput/gcsput/fakegcs"
)

const refusal = `{"error":{"code":429,"message":"You have exceeded your bucket's IO capacity. Please follow the request rate guidelines.","errors":[{"domain":"global","reason":"rateLimitExceeded","message":"You have exceeded your bucket's IO capacity. Please follow the request rate guidelines."}]}}`

func main() {
	addr := flag.String("addr", "127.0.0.1:4555", "")
	r := flag.Float64("rate", 300, "writes/s")
	burst := flag.Int("burst", 300, "")
	rtt := flag.Duration("rtt", 20*time.Millisecond, "")
	flag.Parse()
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"bkt"}})
	if err != nil {
		log.Fatal(err)
	}
	lim := rate.NewLimiter(rate.Limit(*r), *burst)
	var writes, refused atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		time.Sleep(*rtt)
		if req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodDelete {
			if !lim.Allow() {
				refused.Add(1)
				w.Header().Set("Content-Type", "application/json; charset=UTF-8")
				w.WriteHeader(429)
				fmt.Fprint(w, refusal)
				return
			}
			writes.Add(1)
		}
		srv.ServeHTTP(w, req)
	})
	http.HandleFunc("/_stats", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%d %d\n", writes.Load(), refused.Load())
	})
	http.Handle("/", h)
	go func() { log.Fatal(http.ListenAndServe(*addr, nil)) }()
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
}
