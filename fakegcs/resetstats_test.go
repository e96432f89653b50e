package fakegcs_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// TestResetStatsForgetsRequestsInFlight: a request that arrived before
// ResetStats and ends after it belongs to the counters that were reset. It
// must not appear in the new log or byte counts, or a test that resets
// between two runs finds the first run's late request in the second's log
// while the request counts (taken on arrival) never saw it.
func TestResetStatsForgetsRequestsInFlight(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	pr, pw := io.Pipe()
	req, err := http.NewRequest("POST", srv.URL()+"/upload/storage/v1/b/bkt/o?uploadType=media&name=late", pr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		res, err := srv.Client().Do(req)
		if err != nil {
			done <- -1
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		done <- res.StatusCode
	}()
	if _, err := pw.Write([]byte("first part ")); err != nil { // the handler is reading the body
		t.Fatal(err)
	}
	for srv.Stats().Requests["storage.objects.insert"] == 0 {
		time.Sleep(time.Millisecond) // waits for the arrival, the event, not a duration
	}
	srv.ResetStats()
	pw.Write([]byte("and the rest"))
	pw.Close()
	if code := <-done; code != http.StatusOK {
		t.Fatalf("the upload answered %d", code)
	}
	st := srv.Stats()
	if n := len(srv.Log()); n != 0 || st.BytesIn != 0 || st.Requests["storage.objects.insert"] != 0 {
		t.Errorf("after ResetStats, a request that arrived before it: log %v, BytesIn %d, requests %v; want none of it",
			srv.Log(), st.BytesIn, st.Requests)
	}
	// A request that arrives after the reset is counted and logged as usual.
	if r := do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name=next", []byte("x")); r.status != 200 {
		t.Fatalf("next: %d %s", r.status, r.body)
	}
	if log := srv.Log(); len(log) != 1 || log[0].Object != "next" || srv.Stats().BytesIn != 1 {
		t.Errorf("after the reset: log %+v, BytesIn %d; want the one request of 1 byte", log, srv.Stats().BytesIn)
	}
}
