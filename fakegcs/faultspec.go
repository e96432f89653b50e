package fakegcs

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// ParseFaults reads faults from a compact spec: faults separated by ";",
// each "kind" or "kind:key=value,key=value". Keys: op, bucket, object,
// phase, offset, skip, times, p (probability), optional (true/false),
// status (or code), retry-after, after (AfterBytes), persist, delay, bps.
// Sizes take K, M or G suffixes (powers of 1024); durations are Go
// durations. Example, a 5% rate of 503s on uploads plus a 1 MiB/s
// throttle on everything:
//
//	status:op=storage.objects.insert,status=503,p=0.05;throttle:bps=1M,times=-1
func ParseFaults(spec string) ([]Fault, error) {
	var out []Fault
	for item := range strings.SplitSeq(spec, ";") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		kind, params, _ := strings.Cut(item, ":")
		f := Fault{Kind: Kind(strings.TrimSpace(kind))}
		for kv := range strings.SplitSeq(params, ",") {
			if strings.TrimSpace(kv) == "" {
				continue
			}
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("fakegcs: fault %q: %q is not key=value", item, kv)
			}
			if err := setFaultField(&f, strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("fakegcs: fault %q: %w", item, err)
			}
		}
		if err := f.validate(); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// LoadFaults reads faults from a value that is JSON (starts with "[" or
// "{"), a file name holding JSON or a spec, or a spec (see ParseFaults).
func LoadFaults(v string) ([]Fault, error) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{") {
		return ParseFaultsJSON([]byte(v))
	}
	if b, err := os.ReadFile(v); err == nil {
		return LoadFaults(string(b))
	}
	return ParseFaults(v)
}

func setFaultField(f *Fault, k, v string) error {
	var err error
	switch k {
	case "op":
		f.Op = v
	case "bucket":
		f.Bucket = v
	case "object":
		f.Object = v
	case "phase":
		f.Phase = v
	case "offset":
		var n int64
		n, err = ParseSize(v)
		f.Offset = &n
	case "skip":
		f.Skip, err = strconv.Atoi(v)
	case "times":
		f.Times, err = strconv.Atoi(v)
	case "p", "probability":
		f.Probability, err = strconv.ParseFloat(v, 64)
	case "optional":
		f.Optional, err = strconv.ParseBool(v)
	case "status", "code":
		f.Status, err = strconv.Atoi(v)
	case "retry-after":
		f.RetryAfter, err = time.ParseDuration(v)
	case "after":
		f.AfterBytes, err = ParseSize(v)
	case "persist":
		f.Persist, err = ParseSize(v)
	case "delay":
		f.Delay, err = time.ParseDuration(v)
	case "bps":
		f.BytesPerSecond, err = ParseSize(v)
	default:
		return fmt.Errorf("unknown key %q (keys: op, bucket, object, phase, offset, skip, times, p, optional, status, retry-after, after, persist, delay, bps)", k)
	}
	if err != nil {
		return fmt.Errorf("%s=%s: %w", k, v, err)
	}
	return nil
}

// ParseSize reads a byte count with an optional K, M or G suffix (KiB, MiB,
// GiB), as fault specs and cmd/fakegcs's -cap-rate take them: "50M" is
// 52428800.
func ParseSize(v string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(v, "K"):
		mult, v = 1<<10, strings.TrimSuffix(v, "K")
	case strings.HasSuffix(v, "M"):
		mult, v = 1<<20, strings.TrimSuffix(v, "M")
	case strings.HasSuffix(v, "G"):
		mult, v = 1<<30, strings.TrimSuffix(v, "G")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err == nil && (n > math.MaxInt64/mult || n < math.MinInt64/mult) {
		err = fmt.Errorf("%s%s overflows int64", v, map[int64]string{1 << 10: "K", 1 << 20: "M", 1 << 30: "G"}[mult])
	}
	return n * mult, err
}
