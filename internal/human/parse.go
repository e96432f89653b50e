package human

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ChunkAlign is GCS's rule for resumable uploads: every chunk but the last must be a
// multiple of 256 KiB, or the server rejects it.
const ChunkAlign = 256 << 10

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

// ParseSize reads "16MiB", "256KiB", "1.5GiB", "1048576" or "10MB" as a byte count.
func ParseSize(s string) (int64, error) {
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

// GsutilSize writes n as gsutil's -h does (its MakeHumanReadable): the largest binary
// unit n reaches, the value rounded to two decimals and printed as Python's %g prints it,
// so "512 B", "1 KiB", "1.5 KiB", "2.34 GiB".
func GsutilSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for i+1 < len(units) && float64(n) >= math.Ldexp(1, 10*(i+1)) {
		i++
	}
	v := math.Round(math.Ldexp(float64(n), -10*i)*100) / 100
	return strconv.FormatFloat(v, 'g', -1, 64) + " " + units[i]
}

// CheckChunkSize enforces the 256 KiB rule, naming the nearest valid sizes, so a bad
// chunk size is refused before any request is made.
func CheckChunkSize(n int64) error {
	if n <= 0 {
		return fmt.Errorf("chunk size must be positive: use a multiple of 256 KiB such as 8MiB or 16MiB")
	}
	if n%ChunkAlign != 0 {
		// The multiple above n is not suggested when it is past int64 (it would print
		// as negative); n is written in bytes when a suggestion rounds to its text.
		lo := n / ChunkAlign * ChunkAlign
		var near []string
		if lo > 0 {
			near = append(near, Size(lo))
		}
		if lo <= math.MaxInt64-ChunkAlign {
			near = append(near, Size(lo+ChunkAlign))
		}
		given := Size(n)
		if slices.Contains(near, given) {
			given = strconv.FormatInt(n, 10) + " B"
		}
		return fmt.Errorf("%s is not a multiple of 256 KiB (GCS rejects such chunks); try %s", given, strings.Join(near, " or "))
	}
	return nil
}

// CheckPositive refuses a size of 0 or less for the option named.
func CheckPositive(option string) func(int64) error {
	return func(n int64) error {
		if n <= 0 {
			return fmt.Errorf("%s must be a positive size such as 64MiB", option)
		}
		return nil
	}
}
