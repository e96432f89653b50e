package fakegcs_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// A retry test of an operation fakegcs does not serve is refused with 501
// in GCS's error shape, which a conformance runner takes as "skip", instead
// of being accepted and then answering the client 501 forever.
func TestRetryTestRefusesUnservedOps(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	r := do(t, srv, "POST", "/retry_test", []byte(`{"instructions":{"storage.managedFolders.get":["return-503"]},"transport":"HTTP"}`))
	e, err := parseAPIError(r.body)
	if err != nil || r.status != 501 || e.Error.Code != 501 || len(e.Error.Errors) != 1 || e.Error.Errors[0].Reason != "notImplemented" ||
		!strings.Contains(e.Error.Message, "storage.managedFolders.get") {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if r := do(t, srv, "POST", "/retry_test", []byte(`{"instructions":{"storage.objects.get":["return-503"]}}`)); r.status != 200 {
		t.Fatalf("served op: %d %s", r.status, r.body)
	}
}

// A client that vanishes mid-body is logged as "client gone" (499), not as
// a 400 it never received.
func TestClientGoneIsLoggedAsSuch(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	conn, err := net.Dial("tcp", srv.Host())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /upload/storage/v1/b/bkt/o?uploadType=media&name=x HTTP/1.1\r\nHost: %s\r\nContent-Length: 1048576\r\n\r\n", srv.Host())
	conn.Write(make([]byte, 100<<10))
	conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, rec := range srv.Log() {
			if rec.Op == "storage.objects.insert" {
				if rec.Status != 499 || rec.Outcome != "client gone" || rec.BytesIn != 100<<10 {
					t.Fatalf("logged %+v, want 499 client gone after 100 KiB", rec)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the request was never logged")
		}
		time.Sleep(5 * time.Millisecond) // polling for the server's record, not timing it
	}
}
