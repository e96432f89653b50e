package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gcsput/gcsput/internal/human"
)

// chunkAlign is GCS's rule for resumable uploads: every chunk but the last must be a
// multiple of 256 KiB, or the server rejects it.
const chunkAlign = 256 << 10

// sizeUnits maps suffixes to multipliers. K, M, G, T without "i" are binary as in gsutil's
// parallel_composite_upload_threshold and gcloud's sizes; KB, MB, GB, TB are decimal.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseSize reads "16MiB", "256KiB", "1.5GiB", "1048576" or "10MB" as a byte count.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	if t == "" {
		return 0, fmt.Errorf("%q is not a size: want bytes or a number with a unit, e.g. 16MiB, 256KiB, 1048576", s)
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n < 0 || n > math.MaxInt64/mult {
			return 0, fmt.Errorf("%q is out of range", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size: want bytes or a number with a unit, e.g. 16MiB, 256KiB, 1048576", s)
	}
	return int64(f * float64(mult)), nil
}

// formatSize writes n in binary units with one decimal: "16.0 MiB", "512 B"
// (human.Size, which the demo shares).
func formatSize(n int64) string { return human.Size(n) }

// gsutilSize writes n as gsutil's -h does (its MakeHumanReadable): the largest binary
// unit n reaches, the value rounded to two decimals and printed as Python's %g prints it,
// so "512 B", "1 KiB", "1.5 KiB", "2.34 GiB".
func gsutilSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for i+1 < len(units) && float64(n) >= math.Ldexp(1, 10*(i+1)) {
		i++
	}
	v := math.Round(math.Ldexp(float64(n), -10*i)*100) / 100
	return strconv.FormatFloat(v, 'g', -1, 64) + " " + units[i]
}

// sizeValue is a flag.Value holding a byte count.
type sizeValue struct {
	n     *int64
	check func(int64) error // extra rule, e.g. chunk alignment; nil: none
}

func (v sizeValue) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	if v.check != nil {
		if err := v.check(n); err != nil {
			return err
		}
	}
	*v.n = n
	return nil
}

func (v sizeValue) String() string {
	if v.n == nil {
		return "0"
	}
	return strconv.FormatInt(*v.n, 10)
}

// checkChunkSize enforces the 256 KiB rule at the flag, so a bad --chunk-size is a usage
// error (exit 2) naming the nearest valid sizes before any request is made.
func checkChunkSize(n int64) error {
	if n <= 0 {
		return fmt.Errorf("chunk size must be positive: use a multiple of 256 KiB such as 8MiB or 16MiB")
	}
	if n%chunkAlign != 0 {
		// The multiple above n is not suggested when it is past int64 (it would print
		// as negative); n is written in bytes when a suggestion rounds to its text.
		lo := n / chunkAlign * chunkAlign
		var near []string
		if lo > 0 {
			near = append(near, formatSize(lo))
		}
		if lo <= math.MaxInt64-chunkAlign {
			near = append(near, formatSize(lo+chunkAlign))
		}
		given := formatSize(n)
		if slices.Contains(near, given) {
			given = strconv.FormatInt(n, 10) + " B"
		}
		return fmt.Errorf("%s is not a multiple of 256 KiB (GCS rejects such chunks); try %s", given, strings.Join(near, " or "))
	}
	return nil
}

// Size defines a byte-count option.
func (f *flagSet) Size(p *int64, check func(int64) error, long, short, arg, usage string) {
	f.add(sizeValue{n: p, check: check}, long, short, arg, usage)
}
