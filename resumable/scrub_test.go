package resumable

import "testing"

// An empty secret (a rewrite's first call, which has no token yet) scrubs nothing:
// replacing "" put REDACTED between every letter of GCS's message.
func TestScrubSkipsEmptySecret(t *testing.T) {
	const msg = "No such object: bkt/p/a#17"
	if got := scrub(msg, []string{""}); got != msg {
		t.Errorf("scrub with an empty secret = %q, want %q", got, msg)
	}
	if got := scrub("token tok123 refused", []string{"", "tok123"}); got != "token REDACTED refused" {
		t.Errorf("scrub = %q", got)
	}
}
