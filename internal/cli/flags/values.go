package flags

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gcsput/gcsput/internal/human"
)

// Bool is a boolean option: true, 1, yes or false, 0, no, any case.
type Bool bool

func (b *Bool) Set(s string) error {
	switch strings.ToLower(s) {
	case "true", "1", "yes":
		*b = true
	case "false", "0", "no":
		*b = false
	default:
		return fmt.Errorf("want true or false")
	}
	return nil
}
func (b *Bool) String() string   { return fmt.Sprint(b != nil && bool(*b)) }
func (b *Bool) IsBoolFlag() bool { return true }

// String is a string option.
type String string

func (s *String) Set(v string) error { *s = String(v); return nil }
func (s *String) String() string {
	if s == nil {
		return ""
	}
	return string(*s)
}

// Int is a whole-number option; a leading + is allowed, nothing after the digits.
type Int int

func (n *Int) Set(v string) error {
	var i int
	if _, err := fmt.Sscanf(v, "%d", &i); err != nil || fmt.Sprint(i) != strings.TrimPrefix(v, "+") {
		return fmt.Errorf("want a whole number")
	}
	*n = Int(i)
	return nil
}
func (n *Int) String() string {
	if n == nil {
		return "0"
	}
	return fmt.Sprint(int(*n))
}

// Generation is an optional generation number: *P stays nil unless the option is
// given, so "--if-generation-match 0" (only if absent, as in the JSON API) is told
// from no option.
type Generation struct{ P **int64 }

func (g Generation) Set(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || strings.TrimLeft(v, "0123456789") != "" {
		return fmt.Errorf("want a generation number (0: only if the object does not exist)")
	}
	*g.P = &n
	return nil
}
func (g Generation) String() string {
	if g.P == nil || *g.P == nil {
		return ""
	}
	return strconv.FormatInt(**g.P, 10)
}

// Duration is a duration option in Go's syntax (90s, 10m, 1h30m), not negative.
type Duration time.Duration

func (d *Duration) Set(v string) error {
	x, err := time.ParseDuration(v)
	if err != nil || x < 0 {
		return fmt.Errorf("want a duration such as 90s, 10m or 1h30m")
	}
	*d = Duration(x)
	return nil
}
func (d *Duration) String() string {
	if d == nil {
		return "0s"
	}
	return time.Duration(*d).String()
}

// List is a repeatable string option: each use appends.
type List []string

func (l *List) Set(v string) error { *l = append(*l, v); return nil }
func (l *List) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

// Size is a byte-count option ("16MiB", "1048576": human.ParseSize).
type Size struct {
	N     *int64
	Check func(int64) error // extra rule, e.g. human.CheckChunkSize; nil: none
}

func (v Size) Set(s string) error {
	n, err := human.ParseSize(s)
	if err != nil {
		return err
	}
	if v.Check != nil {
		if err := v.Check(n); err != nil {
			return err
		}
	}
	*v.N = n
	return nil
}

func (v Size) String() string {
	if v.N == nil {
		return "0"
	}
	return strconv.FormatInt(*v.N, 10)
}
