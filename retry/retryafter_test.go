package retry_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2015, time.October, 21, 7, 27, 0, 0, time.UTC)
	cases := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"120", 120 * time.Second, true},
		{" 5 ", 5 * time.Second, true},
		{"99999999999999999999999", time.Duration(1<<63 - 1), true},   // saturates
		{"Wed, 21 Oct 2015 07:28:00 GMT", time.Minute, true},          // IMF-fixdate
		{"Wednesday, 21-Oct-15 07:28:30 GMT", 90 * time.Second, true}, // RFC 850
		{"Wed Oct 21 07:29:00 2015", 2 * time.Minute, true},           // asctime
		{"Wed, 21 Oct 2015 07:00:00 GMT", 0, true},                    // in the past
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"+3", 0, false},
		{"soon", 0, false},
		{"Wed, 21 Oct 2015 07:28:00", 0, false},
	}
	for _, c := range cases {
		got, ok := retry.ParseRetryAfter(c.v, now)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", c.v, got, ok, c.want, c.ok)
		}
	}
}

// FuzzParseRetryAfter: never panics, never negative, and digits mean seconds.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", "Wed, 21 Oct 2015 07:28:00 GMT", "Wed Oct 21 07:29:00 2015", "-1", "1e9", "٣"} {
		f.Add(s)
	}
	now := time.Date(2015, time.October, 21, 7, 27, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := retry.ParseRetryAfter(v, now)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v", v, d, ok)
		}
		if n, err := strconv.ParseUint(v, 10, 30); err == nil && (!ok || d != time.Duration(n)*time.Second) {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v; want %d s", v, d, ok, n)
		}
	})
}
