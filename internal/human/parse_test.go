package human

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"16MiB": 16 << 20, "256KiB": 256 << 10, "1048576": 1 << 20, "1.5GiB": 3 << 29,
		"10MB": 10e6, "8M": 8 << 20, "0": 0, " 4 KiB ": 4096, "2g": 2 << 30, "7b": 7,
	}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "1.2.3MiB", "ten", "NaNKiB", "99999999999TiB"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 16 << 20: "16.0 MiB", 3 << 29: "1.5 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCheckChunkSize(t *testing.T) {
	for _, n := range []int64{256 << 10, 16 << 20, 768 << 10} {
		if err := CheckChunkSize(n); err != nil {
			t.Errorf("CheckChunkSize(%d) = %v", n, err)
		}
	}
	for n, want := range map[int64]string{
		0:             "must be positive",
		1000:          "1000 B is not a multiple of 256 KiB (GCS rejects such chunks); try 256.0 KiB",
		300 << 10:     "try 256.0 KiB or 512.0 KiB",
		16<<20 + 1:    "try 16.0 MiB or 16.2 MiB",
		-256 << 10:    "must be positive",
		(1 << 20) - 1: "try 768.0 KiB or 1.0 MiB",
	} {
		err := CheckChunkSize(n)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckChunkSize(%d) = %v, want %q", n, err, want)
		}
	}
	if err := CheckPositive("--slice-threshold")(0); err == nil || err.Error() != "--slice-threshold must be a positive size such as 64MiB" {
		t.Errorf("CheckPositive(0) = %v", err)
	}
}

// gsutil -h sizes: %g of the value rounded to two decimals, in the largest unit reached.
func TestGsutilSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 1636: "1.6 KiB",
		5 << 20: "5 MiB", 2_500_000_000: "2.33 GiB", 1 << 40: "1 TiB"} {
		if got := GsutilSize(n); got != want {
			t.Errorf("GsutilSize(%d) = %q, want %q", n, got, want)
		}
	}
}
