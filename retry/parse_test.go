package retry_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
)

func TestParse(t *testing.T) {
	s := time.Second
	cases := []struct {
		spec string
		want retry.Policy
	}{
		{"gcs", retry.GCS{Initial: s, Multiplier: 2, Max: 32 * s, Jitter: s}},
		{"gcs:max=64s", retry.GCS{Initial: s, Multiplier: 2, Max: 64 * s, Jitter: s}},
		{" GCS : max = 64s , retries=10 ", retry.GCS{Initial: s, Multiplier: 2, Max: 64 * s, Jitter: s, MaxRetries: 10}},
		{"gcs:jitter=0", retry.GCS{Initial: s, Multiplier: 2, Max: 32 * s, Jitter: -1}},
		{"java", retry.Java{Initial: 500 * ms, Multiplier: 1.5, Randomization: 0.5, MaxInterval: 60 * s, MaxElapsed: 15 * time.Minute}},
		{"java:elapsed=0,randomization=0.25,max=30s", retry.Java{Initial: 500 * ms, Multiplier: 1.5, Randomization: 0.25, MaxInterval: 30 * s, MaxElapsed: -1}},
		{"drive", retry.Drive{Initial: s, Multiplier: 2, Jitter: s, MaxRetries: 5}},
		{"simpledb:cap=2m", retry.SimpleDB{Base: 100 * ms, Multiplier: 4, Cap: 2 * time.Minute}},
		{"csma", retry.CSMA{Slot: 100 * ms, Limit: 10, Attempts: 16}},
		{"csma:slot=51.2µs", retry.CSMA{Slot: 51200 * time.Nanosecond, Limit: 10, Attempts: 16}},
		{"exponential:base=5ms,cap=2s", retry.Exponential{Base: 5 * ms, Multiplier: 2, Cap: 2 * s}},
		{"full:base=100ms,cap=20s", retry.FullJitter{Base: 100 * ms, Multiplier: 2, Cap: 20 * s}},
		{"equal:base=100ms,multiplier=3", retry.EqualJitter{Base: 100 * ms, Multiplier: 3, Cap: 32 * s}},
		{"decorrelated:base=100ms,cap=20s", retry.Decorrelated{Base: 100 * ms, Cap: 20 * s}},
		{"constant:wait=1s", retry.Constant{Delay: s}},
		{"constant:wait=0,retries=3", retry.Constant{Delay: -1, MaxRetries: 3}},
	}
	for _, c := range cases {
		got, err := retry.Parse(c.spec)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", c.spec, got, err, c.want)
		}
	}
}

func TestParseStringRoundTrip(t *testing.T) {
	for _, spec := range []string{"gcs", "gcs:jitter=0,max=64s", "java", "java:elapsed=0,randomization=0",
		"drive", "simpledb", "simpledb:cap=1m", "csma", "exponential", "full", "equal", "decorrelated",
		"constant", "constant:wait=0"} {
		p, err := retry.Parse(spec)
		if err != nil {
			t.Fatalf("Parse(%q): %v", spec, err)
		}
		text := p.(interface{ String() string }).String()
		q, err := retry.Parse(text)
		if err != nil || q != p {
			t.Errorf("Parse(%q).String() = %q, which parses to %#v, %v; want %#v", spec, text, q, err, p)
		}
	}
	want := "gcs:initial=1s,multiplier=2,max=32s,jitter=1s,retries=0"
	if got := retry.Default().(interface{ String() string }).String(); got != want {
		t.Errorf("Default().String() = %q, want %q", got, want)
	}
	// A zero value prints its defaults too.
	if got := (retry.Java{}).String(); got != "java:initial=500ms,multiplier=1.5,randomization=0.5,max=1m0s,elapsed=15m0s" {
		t.Errorf("Java{}.String() = %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ spec, part, says string }{
		{"", "", "valid: gcs, java, drive, simpledb, csma, exponential, full, equal, decorrelated, constant"},
		{"fibonacci:base=1s", "fibonacci", "unknown policy; valid: gcs, java,"},
		{"gcs:cap=20s", "cap", "valid keys: initial, multiplier, max, jitter, retries"},
		{"decorrelated:multiplier=2", "multiplier", "valid keys: base, cap, retries"},
		{"gcs:max", "max", "want key=value"},
		{"gcs:max=64s,", "", "want key=value"},
		{"gcs:max=abc", "max=abc", "not a duration (want e.g. 32s or 64s)"},
		{"gcs:max=-1s", "max=-1s", "must be a positive duration"},
		{"gcs:max=0", "max=0", "must be a positive duration"},
		{"gcs:max=1s,max=2s", "max", "given twice"},
		{"gcs:multiplier=0", "multiplier=0", "out of range"},
		{"gcs:multiplier=NaN", "multiplier=NaN", "not a number"},
		{"gcs:retries=-2", "retries=-2", "want a whole number from 0"},
		{"gcs:retries=2.5", "retries=2.5", "want a whole number"},
		{"java:randomization=2", "randomization=2", "out of range"},
		{"csma:limit=63", "limit=63", "want a whole number from 1"},
		{"csma:attempts=0", "attempts=0", "want a whole number from 1"},
		{"drive:retries=0", "retries=0", "want a whole number from 1"},
	}
	for _, c := range cases {
		p, err := retry.Parse(c.spec)
		var se *retry.SpecError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) = %v, %v; want a *SpecError", c.spec, p, err)
			continue
		}
		if se.Spec != c.spec || se.Part != c.part || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Parse(%q): part %q, error %q; want part %q and %q", c.spec, se.Part, err, c.part, c.says)
		}
	}
}

// FuzzParse: Parse never panics, and whatever it accepts prints as a spec it reads back as
// the same policy.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"gcs", "gcs:max=64s", "java:elapsed=0", "csma:slot=1ms,limit=3",
		"decorrelated:base=100ms,cap=20s", "constant:wait=0", "full:base=1ns,multiplier=1e300", "x:y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := retry.Parse(spec)
		if err != nil {
			return
		}
		text := p.(interface{ String() string }).String()
		q, err := retry.Parse(text)
		if err != nil || q != p {
			t.Fatalf("Parse(%q) = %#v prints %q, which parses to %#v, %v", spec, p, text, q, err)
		}
		for n := range 70 {
			if d, ok := p.Wait(retry.Step{N: n, Rand: 0.999}); ok && d < 0 {
				t.Fatalf("%q: negative wait %v at n=%d", spec, d, n)
			}
		}
	})
}
