package resumable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/retry"
)

// rewriting is a scripted answer: not done, total bytes of size, token tok.
func rewriting(total, size int64, tok string) string {
	return fmt.Sprintf(`{"kind":"storage#rewriteResponse","done":false,"totalBytesRewritten":"%d","objectSize":"%d","rewriteToken":%q}`, total, size, tok)
}

func rewritten(data []byte) string {
	return fmt.Sprintf(`{"kind":"storage#rewriteResponse","done":true,"totalBytesRewritten":"%d","objectSize":"%d","resource":%s}`,
		len(data), len(data), objJSON(data))
}

func rewriteSpec(data []byte) RewriteSpec {
	return RewriteSpec{SrcBucket: "src", SrcObject: "a/x", SrcGeneration: 42, SrcCRC32C: crc32.Checksum(data, castagnoli),
		Dst: ObjectSpec{Bucket: "bkt", Name: "o", DoesNotExist: true}}
}

// The loop as a trace: a 503 is retried with backoff, each answer's token
// goes on the next call with the same parameters, every unfinished call is
// checkpointed, and the result's CRC32C is checked.
func TestRewriteTrace(t *testing.T) {
	data := testData(3000)
	rt := newScript(t,
		step{want: "POST start", status: 503, body: `{"error":{"code":503,"message":"busy"}}`},
		step{want: "POST start", status: 200, body: rewriting(1000, 3000, "T1")},
		step{want: "POST start", status: 200, body: rewriting(2000, 3000, "T2")},
		step{want: "POST start", status: 200, body: rewritten(data)})
	c, clk, events := testClient(t, rt, kib256)
	var saved []RewriteProgress
	obj, err := c.Rewrite(context.Background(), rewriteSpec(data), func(p RewriteProgress) { saved = append(saved, p) })
	if err != nil || obj.Generation != 7 {
		t.Fatalf("Rewrite: %+v, %v", obj, err)
	}
	if want := []RewriteProgress{{"T1", 1000, 3000}, {"T2", 2000, 3000}}; !slices.Equal(saved, want) {
		t.Errorf("checkpoints %v", saved)
	}
	if got := clk.Sleeps(); !slices.Equal(got, []time.Duration{1500 * time.Millisecond}) {
		t.Errorf("waits %v", got)
	}
	var toks []string
	for _, r := range rt.got {
		q, _ := url.ParseQuery(r.query)
		toks = append(toks, q.Get("rewriteToken"))
		if q.Get("sourceGeneration") != "42" || q.Get("ifSourceGenerationMatch") != "42" || q.Get("ifGenerationMatch") != "0" || len(r.data) != 0 {
			t.Errorf("call %q: parameters %q, body %q", q.Get("rewriteToken"), r.query, r.data)
		}
	}
	if !slices.Equal(toks, []string{"", "", "T1", "T2"}) {
		t.Errorf("tokens sent %q", toks)
	}
	var kinds []string
	for _, e := range *events {
		kinds = append(kinds, fmt.Sprintf("%s:%d/%d", e.Kind, e.Persisted, e.Length))
	}
	if want := "[retry:0/0 rewrite:1000/1000 rewrite:2000/1000 rewrite:3000/1000 finished:3000/0]"; fmt.Sprint(kinds) != want {
		t.Errorf("events %v", kinds)
	}
}

// A server that answers the same count again and again ends in the retry
// budget (ErrNoProgress), not in a loop; a CRC32C that differs from the
// source's is a ChecksumError; a 400 to a token is ErrRewriteTokenRejected,
// not retried, and the token is in no error text.
func TestRewriteFailures(t *testing.T) {
	data := testData(3000)
	steps := []step{{want: "POST start", status: 200, body: rewriting(1000, 3000, "T1")}}
	for range 12 {
		steps = append(steps, step{want: "POST start", status: 200, body: rewriting(1000, 3000, "T1")})
	}
	c, _, _ := testClient(t, newScript(t, steps...), kib256)
	_, err := c.Rewrite(context.Background(), rewriteSpec(data), nil)
	if !errors.Is(err, retry.ErrNoProgress) || !strings.Contains(err.Error(), "gave up after 12 attempts") {
		t.Errorf("no progress: %v", err)
	}

	c, _, _ = testClient(t, newScript(t, step{want: "POST start", status: 200, body: rewritten(testData(10))}), kib256)
	var ce *ChecksumError
	if _, err := c.Rewrite(context.Background(), rewriteSpec(data), nil); !errors.As(err, &ce) || !errors.Is(err, ErrChecksumMismatch) {
		t.Errorf("crc mismatch: %v", err)
	}

	secret := "SECRETTOKEN99"
	rt := newScript(t, step{want: "POST start", status: 400, body: `{"error":{"code":400,"message":"Invalid token ` + secret + `"}}`})
	c, _, events := testClient(t, rt, kib256)
	spec := rewriteSpec(data)
	spec.Token, spec.Rewritten = secret, 1000
	_, err = c.Rewrite(context.Background(), spec, nil)
	if !errors.Is(err, ErrRewriteTokenRejected) || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "at offset 1000") {
		t.Errorf("token refused: %v", err)
	}
	if len(*events) != 1 || (*events)[0].Kind != EventResumed || (*events)[0].Offset != 1000 || strings.Contains(fmt.Sprint(*events), secret) {
		t.Errorf("events %v", *events)
	}
	if s := fmt.Sprintf("%v %#v", RewriteProgress{Token: secret}, RewriteProgress{Token: secret}); strings.Contains(s, secret) {
		t.Errorf("RewriteProgress prints its token: %s", s)
	}
	if _, err := c.Rewrite(context.Background(), RewriteSpec{SrcBucket: "a", SrcObject: "b", Dst: ObjectSpec{Bucket: "c", Name: "d"}}, nil); err == nil || !strings.Contains(err.Error(), "source's generation") {
		t.Errorf("no generation: %v", err)
	}
}

// Against fakegcs: a rewrite stopped after its second call resumes from
// the token saved then, and the server rewrites only the remainder; a
// source overwritten meanwhile fails the next call at once (412), not after
// the retry budget.
func TestRewriteResumeFromCheckpoint(t *testing.T) {
	e := newEnvWith(t, kib256, fakegcs.Options{Buckets: []string{"src"}, RewriteBytesPerCall: 1 << 20})
	data := testData(5<<20 + 17)
	src, _ := e.srv.PutObject("src", "a/x", data)
	spec := RewriteSpec{SrcBucket: "src", SrcObject: "a/x", SrcGeneration: src.Generation, SrcCRC32C: src.CRC32C,
		Dst: ObjectSpec{Bucket: "bkt", Name: "o", ContentType: "text/x-copy"}}
	ctx, cancel := context.WithCancel(context.Background())
	var last RewriteProgress
	_, err := e.c.Rewrite(ctx, spec, func(p RewriteProgress) {
		if last = p; p.Rewritten == 2<<20 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || last.Rewritten != 2<<20 || last.Size != int64(len(data)) {
		t.Fatalf("stopped rewrite: %v, %v", err, last)
	}
	e.srv.ResetStats()
	spec.Token, spec.Rewritten = last.Token, last.Rewritten
	obj, err := e.c.Rewrite(context.Background(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, attrs, _ := e.srv.Object("bkt", "o")
	st := e.srv.Stats()
	if !bytes.Equal(got, data) || attrs.ContentType != "text/x-copy" || int64(obj.Size) != int64(len(data)) ||
		st.BytesRewritten != int64(len(data))-2<<20 || st.Requests["storage.objects.rewrite"] != 4 {
		t.Errorf("resumed: %d bytes, %q, %d rewritten in %d calls", len(got), attrs.ContentType, st.BytesRewritten, st.Requests["storage.objects.rewrite"])
	}

	e.srv.ResetStats()
	spec.Token, spec.Rewritten, spec.Dst.Name = "", 0, "o2"
	_, err = e.c.Rewrite(context.Background(), spec, func(RewriteProgress) { e.srv.PutObject("src", "a/x", []byte("new")) })
	if !errors.Is(err, ErrPreconditionFailed) || e.srv.Count("storage.objects.rewrite") != 2 {
		t.Errorf("source overwritten: %v after %d calls", err, e.srv.Count("storage.objects.rewrite"))
	}
}
