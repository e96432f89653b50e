package main

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// fixture is a report filled with made-up samples whose ratios are known.
func fixture() *report {
	const chunk = 16 << 20
	o := options{Size: 1e9, Files: 2000, FileSize: 16 << 10, Parallel: []int{32}, ChunkSize: chunk, Rounds: 1, CLIRounds: 1,
		FaultMode: faultsFixed, FaultRate: 0.05, CapRate: 50e6}
	scs := []scenario{
		{name: scenarioLarge, parallel: 1},
		{name: "small-p32", parallel: 32, small: true},
		{name: scenarioFaults, parallel: 1, faults: true},
		{name: scenarioCapped, capped: true},
	}
	var cs []client
	for _, n := range []string{clientGcsput, clientGcsputUncapped, clientOfficial, clientOfficialSingle, clientHTTP, clientHTTPCRC, clientGcloud} {
		cs = append(cs, client{name: n})
	}
	r := newReport(o, scs, cs)
	large := func(op, c string, secs float64, rssMiB int64) {
		r.add(scenarioLarge, op, c, sample{childResult: childResult{Seconds: secs, Bytes: 1e9, Files: 1}, CPU: 1, MaxRSS: rssMiB << 20})
	}
	large(opUpload, clientHTTP, 0.8, 10)      // 1250 MB/s
	large(opUpload, clientOfficial, 1.25, 40) // 800 MB/s
	large(opUpload, clientGcsput, 0.9, 100)   // 1111 MB/s
	large(opDownload, clientHTTP, 0.8, 10)
	large(opDownload, clientOfficial, 1.25, 40)
	large(opDownload, clientGcsput, 2, 30) // 500 MB/s
	large(opUpload, clientHTTPCRC, 1, 10)  // 1000 MB/s
	large(opDownload, clientHTTPCRC, 1, 10)
	small := func(c string, secs float64, rssMiB int64) {
		r.add("small-p32", opUpload, c, sample{childResult: childResult{Seconds: secs, Bytes: 2000 << 14, Files: 2000}, CPU: 1, MaxRSS: rssMiB << 20})
	}
	small(clientHTTP, 0.2, 10)           // 10000 files/s
	small(clientOfficial, 10, 1100)      // 200 files/s
	small(clientOfficialSingle, 0.8, 60) // 2500 files/s
	small(clientGcsput, 0.25, 40)        // 8000 files/s
	smallDown := func(c string, secs float64) {
		r.add("small-p32", opDownload, c, sample{childResult: childResult{Seconds: secs, Bytes: 2000 << 14, Files: 2000}, CPU: 1, MaxRSS: 40 << 20})
	}
	smallDown(clientHTTP, 0.2)   // 10000 files/s
	smallDown(clientGcsput, 0.4) // 5000 files/s
	for _, s := range []struct {
		secs, slept float64
		extra       int64
		faults      int
	}{{3, 1.5, 2 * chunk, 3}, {2.5, 1.2, chunk / 2, 1}, {4, 2, 0, 0}} {
		r.add(scenarioFaults, opUpload, clientGcsput, sample{
			childResult: childResult{Seconds: s.secs, Slept: s.slept, Bytes: 1e9, Files: 1, RetriesMeasured: true, Retries: s.faults},
			Moved:       1e9 + s.extra, Faults: s.faults, FaultsArmed: 4, Requests: 70 + s.faults, CPU: 1, MaxRSS: 1 << 20})
	}
	faults := func(op, c string, secs, slept float64, retries int, measured bool) {
		r.add(scenarioFaults, op, c, sample{
			childResult: childResult{Seconds: secs, Slept: slept, Bytes: 1e9, Files: 1, Retries: retries, RetriesMeasured: measured},
			Moved:       1e9, Faults: 3, FaultsArmed: 3, Requests: 4, CPU: 1, MaxRSS: 1 << 20})
	}
	faults(opUpload, clientOfficial, 2, 0.7, 4, true) // 500 MB/s
	faults(opDownload, clientGcsput, 1, 0.5, 3, true)
	faults(opDownload, clientOfficial, 1.25, 0.25, 3, true)
	faults(opDownload, clientGcloud, 5, 0, 0, false)
	capped := func(op, c string, secs float64) {
		r.add(scenarioCapped, op, c, sample{childResult: childResult{Seconds: secs, Bytes: 1e9, Files: 1}, Requests: 10, CPU: 1, MaxRSS: 1 << 20})
	}
	capped(opUpload, clientGcsput, 20)          // 50 MB/s: one connection
	capped(opUpload, clientGcsputUncapped, 1)   // 1000 MB/s: above 8 × 50
	capped(opUpload, clientGcloud, 10)          // 100 MB/s
	capped(opDownload, clientGcsput, 4.5)       // 222 MB/s
	capped(opDownload, clientGcsputUncapped, 4) // 250 MB/s: below 8 × 50
	capped(opDownload, clientGcloud, 10)
	return r
}

func TestRatios(t *testing.T) {
	r := fixture()
	got := map[rowKey]row{}
	for _, rw := range r.rows() {
		got[rw.rowKey] = rw
	}
	for _, c := range []struct {
		k                rowKey
		xLoop, xOfficial float64
	}{
		{rowKey{scenarioLarge, opUpload, clientGcsput}, 1111.1 / 1250, 1111.1 / 800},
		{rowKey{scenarioLarge, opDownload, clientGcsput}, 0.4, 0.625},
		{rowKey{"small-p32", opUpload, clientGcsput}, 0.8, 3.2},                     // against the best: single-request
		{rowKey{"small-p32", opUpload, clientOfficial}, 0.02, 0.08},                 // itself against the best
		{rowKey{scenarioFaults, opUpload, clientGcsput}, 333.3 / 1250, 333.3 / 500}, // against the fault-free loopback
		{rowKey{scenarioCapped, opUpload, clientGcsput}, math.NaN(), math.NaN()},    // no plain server with a cap
	} {
		rw, ok := got[c.k]
		if !ok {
			t.Fatalf("no row %v", c.k)
		}
		if !near(rw.xLoop, c.xLoop) || !near(rw.xOfficial, c.xOfficial) {
			t.Errorf("%v: × loopback %.4f × official %.4f, want %.4f %.4f", c.k, rw.xLoop, rw.xOfficial, c.xLoop, c.xOfficial)
		}
	}
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) < 1e-3
}

func TestTargets(t *testing.T) {
	var buf bytes.Buffer
	fixture().writeTargets(&buf)
	out := buf.String()
	for _, want := range []string{
		"- PASS large upload: gcsput ≥ 1.0× official: 1.39× (1111 vs 800 MB/s)",
		"- PASS large upload: gcsput ≥ 0.9× http-crc: 1.11× (1111 vs 1000 MB/s)",
		"- info large upload: gcsput vs loopback (sendfile): 0.89× (1111 vs 1250 MB/s)",
		"- info large download: gcsput vs http-crc: 0.50× (500 vs 1000 MB/s)",
		"- FAIL small-p32 download: gcsput ≥ 0.7× loopback: 0.50× (5000 vs 10000 files/s)",
		"- FAIL faults upload: gcsput ≥ 1.0× official: 0.67× (333 vs 500 MB/s)",
		"- PASS faults download: gcsput ≥ 1.0× official: 1.25× (1000 vs 800 MB/s)",
		"- FAIL capped upload: gcsput ≥ 1.0× gcloud: 0.50× (50 vs 100 MB/s)",
		"- FAIL capped upload: gcsput ≥ 0.8× min(12 slices × cap, gcsput uncapped): 0.08× (50 vs min(600, 1000) MB/s)",
		"- PASS capped download: gcsput ≥ 1.0× gcloud: 2.22× (222 vs 100 MB/s)",
		"- PASS capped download: gcsput ≥ 0.8× min(12 slices × cap, gcsput uncapped): 0.89× (222 vs min(600, 250) MB/s)",
		"- FAIL large download: gcsput ≥ 1.0× official: 0.62× (500 vs 800 MB/s)",
		"- FAIL large download: gcsput ≥ 0.8× loopback: 0.40× (500 vs 1250 MB/s)",
		"- PASS small-p32 upload: gcsput ≥ 2.0× official best: 3.20× (8000 vs 2500 files/s)",
		"- PASS small-p32 upload: gcsput ≥ 0.5× loopback: 0.80× (8000 vs 10000 files/s)",
		"- PASS small-p32 upload: gcsput peak RSS ≤ 128 MiB: 40 MiB (official client: 1100 MiB)",
		"- FAIL large upload: gcsput peak RSS ≤ 64 MiB: 100 MiB (official client: 40 MiB)",
		// Rounds: 32 MiB extra for 3 faults, 8 MiB for 1, none for 0.
		"- PASS faults upload: bytes fakegcs received ≤ size + one chunk per fault: worst round: 32.0 MiB extra with 3 faults (allowed 48 MiB)",
		// Speeds without sleep: 666.7, 769.2, 500 MB/s; median 666.7 against 1111.1.
		"- FAIL faults upload: MB/s excluding backoff sleep ≥ 0.7× fault-free: 0.60× (667 vs 1111 MB/s)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

// The faults table shows how many of the fixed faults fired, and retries
// only where they were measured.
func TestFaultsTable(t *testing.T) {
	var buf bytes.Buffer
	fixture().writeFaults(&buf)
	for _, want := range []string{
		"| upload | gcsput | 1 of 4 | 71 | 1 | 1.5 | 961.7 |", // medians of the three rounds
		"| upload | official | 3 of 3 | 4 | 4 | 0.7 | 953.7 |",
		"| download | gcloud | 3 of 3 | 4 | – | – | 953.7 |",
	} {
		if !strings.Contains(buf.String(), want+"\n") {
			t.Errorf("missing %q in\n%s", want, buf.String())
		}
	}
}

// The capped table shows each rate as capped connections' worth and
// against gcloud's.
func TestCappedTable(t *testing.T) {
	var buf bytes.Buffer
	fixture().writeCapped(&buf)
	for _, want := range []string{
		"caps each connection at 50 MB/s each way",
		"| upload | gcsput | 50.0 | 1.0 | 0.50 | – | 10 |",
		"| upload | gcsput-uncapped | 1000.0 | (no cap) | 10.00 | – | 10 |",
		"| download | gcloud | 100.0 | 2.0 | 1.00 | – | 10 |",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("missing %q in\n%s", want, buf.String())
		}
	}
}

// A reference that failed is named as the reason a target is not judged.
func TestCappedTargetWithoutGcloud(t *testing.T) {
	r := fixture()
	delete(r.samples, rowKey{scenarioCapped, opUpload, clientGcloud})
	r.fail(scenarioCapped, opUpload, clientGcloud, errors.New("compose refused"))
	for _, tg := range r.targets() {
		if tg.name == "capped upload: gcsput ≥ 1.0× gcloud" && (tg.status != "n/a" || !strings.Contains(tg.detail, "gcloud failed")) {
			t.Errorf("%s: %s %s, want n/a naming gcloud's failure", tg.name, tg.status, tg.detail)
		}
	}
}

func TestFaultBytesTargetFails(t *testing.T) {
	r := fixture()
	k := rowKey{scenarioFaults, opUpload, clientGcsput}
	r.samples[k][1].Moved = 1e9 + 2*r.o.ChunkSize // two chunks for one fault
	for _, tg := range r.targets() {
		if strings.HasPrefix(tg.name, "faults upload: bytes") && tg.status != "FAIL" {
			t.Errorf("%s: %s %s, want FAIL", tg.name, tg.status, tg.detail)
		}
	}
}

// A run of some scenarios shows only their targets: -scenarios capped
// prints no n/a lines for the others.
func TestTargetsOfScenariosLeftOut(t *testing.T) {
	r := fixture()
	r.scenarios = r.scenarios[len(r.scenarios)-1:] // capped
	ts := r.targets()
	if len(ts) != 4 {
		t.Errorf("%d targets, want capped's 4: %v", len(ts), ts)
	}
	for _, tg := range ts {
		if !strings.HasPrefix(tg.name, scenarioCapped+" ") {
			t.Errorf("target %q of a scenario the run left out", tg.name)
		}
	}
	// Faults without the fault-free large upload: what needs it is n/a.
	r = fixture()
	delete(r.samples, rowKey{scenarioLarge, opUpload, clientGcsput})
	for _, tg := range r.targets() {
		if strings.HasPrefix(tg.name, "faults upload: MB/s excluding") && tg.status != "n/a" {
			t.Errorf("%s: %s, want n/a", tg.name, tg.status)
		}
	}
}

func TestMissingFiguresAreNotJudged(t *testing.T) {
	r := fixture()
	delete(r.samples, rowKey{scenarioLarge, opDownload, clientOfficial})
	for _, tg := range r.targets() {
		if tg.name == "large download: gcsput ≥ 1.0× official" && tg.status != "n/a" {
			t.Errorf("%s: %s, want n/a", tg.name, tg.status)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1GiB": 1 << 30, "64MiB": 64 << 20, "16KiB": 16 << 10, "4096": 4096, "3B": 3} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1GB", "-5", "x"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]int64{"50MB": 50e6, "50MB/s": 50e6, "1GB": 1e9, "500kB": 5e5, "50MiB": 50 << 20, "1000": 1000} {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("parseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "50M", "-1MB", "fast"} {
		if _, err := parseRate(in); err == nil {
			t.Errorf("parseRate(%q) accepted", in)
		}
	}
}

func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"-quick", "-files", "50"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Size != 64<<20 || o.Files != 50 || o.Rounds != 1 || o.ChunkSize != 16<<20 || o.FaultMode != faultsFixed || o.CapRate != 50e6 {
		t.Errorf("-quick -files 50: %+v", o)
	}
	for args, want := range map[string]string{
		"-chunk 1000":       "not a positive multiple of 256 KiB",
		"-clients gsutil":   `unknown client "gsutil"`,
		"-rounds 0":         "-rounds and -cli-rounds must be at least 1",
		"-parallel 1,x":     `bad number "x"`,
		"-fault-rate 1":     "-fault-rate must be in [0, 1)",
		"-fault-mode often": `-fault-mode "often" is neither fixed nor random`,
		"-cap-rate 0":       "-cap-rate must be positive",
		"-cap-rate 50Mbit":  `bad rate "50Mbit"`,
		"-size 1GB":         `bad size "1GB"`,
		"-quick extra-word": `unexpected argument "extra-word"`,
	} {
		_, err := parseFlags(strings.Fields(args), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to contain %q", args, err, want)
		}
	}
}

func TestParseVmHWM(t *testing.T) {
	status := "Name:\tgcsbench\nVmPeak:\t 1000 kB\nVmHWM:\t   12345 kB\nVmRSS:\t 1 kB\n"
	if got := parseVmHWM(status); got != 12345<<10 {
		t.Errorf("parseVmHWM = %d, want %d", got, 12345<<10)
	}
	for _, bad := range []string{"", "VmHWM: x kB\n", "VmHWM: 12 MB\n"} {
		if got := parseVmHWM(bad); got != 0 {
			t.Errorf("parseVmHWM(%q) = %d, want 0", bad, got)
		}
	}
}
