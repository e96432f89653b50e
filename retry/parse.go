package retry

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Parse builds a policy from its text form, as the CLI's --retry flag gives it:
//
//	spec  = name [ ":" key "=" value { "," key "=" value } ]
//
// Names and keys (durations are Go durations such as 500ms, 32s, 2m; a 0 for jitter,
// randomization, wait or elapsed means none):
//
//	gcs           initial, multiplier, max, jitter, retries
//	java          initial, multiplier, randomization, max, elapsed
//	drive         initial, multiplier, jitter, retries
//	simpledb      base, multiplier, cap, retries
//	csma          slot, limit, attempts
//	exponential   base, multiplier, cap, retries
//	full          base, multiplier, cap, retries
//	equal         base, multiplier, cap, retries
//	decorrelated  base, cap, retries
//	constant      wait, retries
//
// Keys left out take the policy's defaults. The result has every default filled in, and its
// String method gives back a spec that Parse reads as the same policy. A bad spec gives a
// *[SpecError] naming the bad part and listing what is valid there.
func Parse(spec string) (Policy, error) {
	name, args, _ := strings.Cut(strings.TrimSpace(spec), ":")
	name = strings.ToLower(strings.TrimSpace(name))
	k, ok := kindOf(name)
	if !ok {
		return nil, &SpecError{Spec: spec, Part: name, Reason: "unknown policy; valid: " + strings.Join(names(), ", ")}
	}
	p := k.zero()
	ps := p.params()
	seen := map[string]bool{}
	for _, kv := range splitArgs(args) {
		key, val, found := strings.Cut(kv, "=")
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		if !found || key == "" {
			return nil, &SpecError{Spec: spec, Part: kv, Reason: "want key=value; valid keys for " + name + ": " + keyList(ps)}
		}
		i := slices.IndexFunc(ps, func(p param) bool { return p.key == key })
		if i < 0 {
			return nil, &SpecError{Spec: spec, Part: key, Reason: "unknown key for " + name + "; valid keys: " + keyList(ps)}
		}
		if seen[key] {
			return nil, &SpecError{Spec: spec, Part: key, Reason: "given twice"}
		}
		seen[key] = true
		if err := ps[i].set(val); err != nil {
			return nil, &SpecError{Spec: spec, Part: kv, Reason: err.Error()}
		}
	}
	return p.done(), nil
}

// SpecError is a policy spec that Parse cannot read.
type SpecError struct {
	Spec   string // the whole spec as given
	Part   string // the name, key or key=value at fault
	Reason string // what is wrong, with the valid choices
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("retry: bad policy spec %q: %q: %s", e.Spec, e.Part, e.Reason)
}

// splitArgs splits "a=1, b=2" into its key=value parts; an empty list gives none.
func splitArgs(args string) []string {
	if strings.TrimSpace(args) == "" {
		return nil
	}
	return strings.Split(args, ",")
}

// A param is one spec key bound to a field of a policy value being built.
type param struct {
	key  string
	dur  *time.Duration
	num  *float64
	cnt  *int
	none bool    // a 0 in a spec means "none", stored as -1 (a 0 field means the default)
	min  float64 // the smallest valid value (in the field's unit, seconds for durations)
	most float64 // the largest valid value; 0 means no limit
	hint string  // an example of a valid value for the error message
}

func (p param) set(v string) error {
	switch {
	case p.dur != nil:
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("not a duration (want e.g. %s)", p.hint)
		}
		if d == 0 && p.none {
			*p.dur = -1
			return nil
		}
		if d.Seconds() < p.min || d <= 0 {
			return fmt.Errorf("must be a positive duration (e.g. %s)", p.hint)
		}
		*p.dur = d
	case p.num != nil:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("not a number (want e.g. %s)", p.hint)
		}
		if f == 0 && p.none {
			*p.num = -1
			return nil
		}
		if f < p.min || f <= 0 || p.most > 0 && f > p.most {
			return fmt.Errorf("out of range (want e.g. %s)", p.hint)
		}
		*p.num = f
	default:
		n, err := strconv.Atoi(v)
		if err != nil || float64(n) < p.min || n < 0 || p.most > 0 && float64(n) > p.most {
			return fmt.Errorf("want a whole number from %g (e.g. %s)", p.min, p.hint)
		}
		*p.cnt = n
	}
	return nil
}

func (p param) format() string {
	switch {
	case p.dur != nil:
		return max(*p.dur, 0).String()
	case p.num != nil:
		return strconv.FormatFloat(max(*p.num, 0), 'g', -1, 64)
	}
	return strconv.Itoa(max(*p.cnt, 0))
}

func keyList(ps []param) string {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.key
	}
	return strings.Join(keys, ", ")
}

// spec renders a policy's name and resolved parameters in Parse's grammar.
func spec(name string, ps []param) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.key + "=" + p.format()
	}
	return name + ":" + strings.Join(parts, ",")
}

// builder is a policy value being parsed: its params point into it, done returns it.
type builder interface {
	params() []param
	done() Policy
}

// kind names a policy type for Parse.
type kind struct {
	name string
	zero func() builder
}

var kinds = []kind{
	{"gcs", func() builder { p := GCS{}.resolved(); return &p }},
	{"java", func() builder { p := Java{}.resolved(); return &p }},
	{"drive", func() builder { p := Drive{}.resolved(); return &p }},
	{"simpledb", func() builder { p := SimpleDB{}.resolved(); return &p }},
	{"csma", func() builder { p := CSMA{}.resolved(); return &p }},
	{"exponential", func() builder { p := Exponential{}.resolved(); return &p }},
	{"full", func() builder { p := FullJitter(Exponential{}.resolved()); return &p }},
	{"equal", func() builder { p := EqualJitter(Exponential{}.resolved()); return &p }},
	{"decorrelated", func() builder { p := Decorrelated{}.resolved(); return &p }},
	{"constant", func() builder { p := Constant{}.resolved(); return &p }},
}

func kindOf(name string) (kind, bool) {
	i := slices.IndexFunc(kinds, func(k kind) bool { return k.name == name })
	if i < 0 {
		return kind{}, false
	}
	return kinds[i], true
}

func names() []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k.name
	}
	return out
}
