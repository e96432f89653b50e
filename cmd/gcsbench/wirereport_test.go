package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/upload"
)

// wireFixture is a report of the wire scenarios filled with made-up
// samples whose rates, connections and ratios are known: 20 ms RTT, a cap
// of 50 MB/s, so gcsput's large-file limit is min(8 × 50, http-crc).
func wireFixture() *report {
	o := options{WireSize: 1e9, WireFiles: 2000, FileSize: 16 << 10, WireParallel: []int{8, 32}, ChunkSize: 16 << 20,
		Rounds: 1, CLIRounds: 1, FaultMode: faultsFixed, CapRate: 50e6, RTT: 20 * time.Millisecond}
	scs := []scenario{
		{name: scenarioWireLarge, wire: true},
		{name: "wire-small-p8", parallel: 8, small: true, wire: true},
		{name: "wire-small-p32", parallel: 32, small: true, wire: true},
		{name: scenarioWireFaults, wire: true, faults: true},
		{name: scenarioWireTLS, tls: true},
	}
	var cs []client
	for _, n := range []string{clientGcsput, clientGcsputH2, clientGcsputH2x4, clientOfficial, clientHTTPCRC, clientGcloud} {
		cs = append(cs, client{name: n})
	}
	r := newReport(o, scs, cs)
	h1 := func(n int) map[string]int { return map[string]int{"HTTP/1.1": n} }
	h2 := func(n int) map[string]int { return map[string]int{"HTTP/2.0": n} }
	add := func(sc, op, c string, secs, cpu float64, files int, conns int, by map[string]int) {
		bytes := int64(1e9)
		if files > 1 {
			bytes = int64(files) << 14
		}
		r.add(sc, op, c, sample{childResult: childResult{Seconds: secs, Bytes: bytes, Files: files}, CPU: cpu, MaxRSS: 30 << 20,
			Conns: conns, ConnsBy: by})
	}
	add(scenarioWireTLS, opUpload, clientHTTPCRC, 2, 4, 1, 0, nil)       // 500 MB/s, 250 MB per CPU s
	add(scenarioWireTLS, opUpload, clientGcsput, 2.5, 5, 1, 1, h1(1))    // 400 MB/s, 200 MB per CPU s: 0.80×
	add(scenarioWireTLS, opDownload, clientHTTPCRC, 4, 4, 1, 0, nil)     // 250 MB/s
	add(scenarioWireTLS, opDownload, clientGcsput, 3, 3, 1, 8, h1(8))    // 333 MB/s, 333 MB per CPU s: 1.33×
	add(scenarioWireLarge, opUpload, clientGcsput, 3, 3, 1, 9, h1(9))    // 333 MB/s vs min(400, 500)
	add(scenarioWireLarge, opUpload, clientGcsputH2, 20, 3, 1, 8, h2(1)) // 50 MB/s, 1 h2 (+7)
	add(scenarioWireLarge, opUpload, clientGcloud, 10, 9, 1, 15, h1(15)) // 100 MB/s
	add(scenarioWireLarge, opDownload, clientGcsput, 8, 3, 1, 8, h1(8))  // 125 MB/s vs min(400, 250)
	add(scenarioWireLarge, opDownload, clientGcsputH2x4, 5, 3, 1, 2, h2(2))
	add(scenarioWireLarge, opDownload, clientGcloud, 10, 9, 1, 9, h1(9))
	add("wire-small-p32", opUpload, clientGcsput, 2, 1, 2000, 33, h1(32))  // 1000 files/s vs 1600
	add("wire-small-p32", opUpload, clientGcloud, 20, 9, 2000, 32, h1(32)) // 100 files/s
	add("wire-small-p32", opDownload, clientGcsput, 1.5, 1, 2000, 32, map[string]int{"HTTP/1.1": 30, "HTTP/2.0": 2})
	r.add(scenarioWireFaults, opUpload, clientGcsput, sample{childResult: childResult{Seconds: 10, Bytes: 1e9, Files: 1,
		Retries: 4, RetriesMeasured: true}, CPU: 3, Faults: 4, FaultsArmed: 4, Conns: 3, ConnsBy: h1(3)})
	return r
}

// The wire table shows each rate in its unit, the connections by protocol,
// the limit and the ratios; the plaintext table is left out when no
// plaintext scenario ran.
func TestWireTable(t *testing.T) {
	var buf bytes.Buffer
	wireFixture().writeTransfers(&buf)
	out := buf.String()
	for _, want := range []string{
		"| wire-large | upload | gcsput | 333.3 MB/s | 9 h1 | 500.0 MB/s | 0.67 | 3.33 | 3.00 | – | – |",
		"| wire-large | upload | gcsput-h2 | 50.0 MB/s | 1 h2 (+7) | 500.0 MB/s | 0.10 | 0.50 | 3.00 | – | – |",
		"| wire-large | download | gcsput | 125.0 MB/s | 8 h1 | 250.0 MB/s | 0.50 | 1.25 | 3.00 | – | – |",
		"| wire-large | upload | gcloud | 100.0 MB/s | 15 h1 | 500.0 MB/s | 0.20 | 1.00 | 9.00 | – | – |",
		"| wire-small-p32 | upload | gcsput | 1000 files/s | 32 h1 (+1) | 1600 files/s | 0.62 | 10.00 | 1.00 | – | – |",
		"| wire-small-p32 | download | gcsput | 1333 files/s | 2 h2 + 30 h1 | 1600 files/s | 0.83 | – | 1.00 | – | – |",
		"| wire-faults | upload | gcsput | 100.0 MB/s | 3 h1 | – | – | – | 3.00 | 4 of 4 | 4 |",
		"| upload | gcsput | 400.0 | 5.00 | 200 | 1 h1 |",
		"| upload | http-crc | 500.0 | 4.00 | 250 | – |",
		"20ms round trip, 50 MB/s per connection",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "× loopback") {
		t.Errorf("the plaintext table is printed for a wire-only run:\n%s", out)
	}
}

// The wire's targets are judged on gcsput's default row, each against its
// own reference; a faster HTTP/2 setting is pointed out.
func TestWireTargets(t *testing.T) {
	var buf bytes.Buffer
	wireFixture().writeTargets(&buf)
	out := buf.String()
	for _, want := range []string{
		"- PASS wire-large upload: gcsput ≥ 1.5× gcloud: 3.33× (333 vs 100 MB/s)",
		"- FAIL wire-large upload: gcsput ≥ 0.8× limit: 0.67× (333 vs 500 MB/s)",
		"- FAIL wire-large download: gcsput ≥ 1.5× gcloud: 1.25× (125 vs 100 MB/s)",
		"- FAIL wire-large download: gcsput ≥ 0.8× limit: 0.50× (125 vs 250 MB/s)",
		"- FAIL wire-small-p32 upload: gcsput ≥ 0.8× j/RTT: 0.62× (1000 vs 1600 files/s)",
		"- PASS wire-small-p32 upload: gcsput ≥ 2.0× gcloud: 10.00× (1000 vs 100 files/s)",
		"- PASS wire-small-p32 download: gcsput ≥ 0.8× j/RTT: 0.83× (1333 vs 1600 files/s)",
		"- n/a wire-small-p32 download: gcsput ≥ 2.0× gcloud: not measured",
		"- FAIL wire-tls upload: gcsput MB per CPU s ≥ 0.9× http-crc over TLS: 0.80× (200 vs 250 MB per CPU s; 400 vs 500 MB/s)",
		"- PASS wire-tls download: gcsput MB per CPU s ≥ 0.9× http-crc over TLS: 1.33× (333 vs 250 MB per CPU s; 333 vs 250 MB/s)",
		"- info wire-large download: fastest gcsput setting: gcsput-h2x4, 1.60× the default (200.0 vs 125.0)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "wire-large upload: fastest") {
		t.Errorf("a slower setting is pointed out:\n%s", out)
	}
}

// Without a round trip there is no j / RTT, and without wire-tls the large
// file's limit is the streams' cap alone.
func TestWireLimits(t *testing.T) {
	r := wireFixture()
	r.o.RTT = 0
	small, _ := r.scenario("wire-small-p8")
	if got := r.wireLimit(small, opUpload, clientGcsput); got == got {
		t.Errorf("small-file limit without RTT: %v, want NaN", got)
	}
	r.scenarios = r.scenarios[:4] // no wire-tls
	delete(r.samples, rowKey{scenarioWireTLS, opDownload, clientHTTPCRC})
	large, _ := r.scenario(scenarioWireLarge)
	streams := float64(upload.DefaultMaxSlices) * 50 // the fixture's 50 MB/s a connection
	for c, want := range map[string]float64{clientGcsput: streams, clientGcsputH2: streams, clientGcloud: streams, clientOfficial: 50} {
		if got := r.wireLimit(large, opDownload, c); got != want {
			t.Errorf("%s: limit %v, want %v", c, got, want)
		}
	}
}

// The wire scenarios run only when named, like manyfiles; -quick gives
// them 256 MiB and keeps their 2,000 files.
func TestWireSelection(t *testing.T) {
	o, err := parseFlags([]string{"-quick"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if anyWire(o) || !anyPlain(o) {
		t.Errorf("default selection: wire %v, plain %v; want only plain", anyWire(o), anyPlain(o))
	}
	o, err = parseFlags([]string{"-quick", "-scenarios", "wire", "-rtt", "40ms", "-cap-rate", "30MB"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !anyWire(o) || anyPlain(o) || o.WireSize != 256<<20 || o.WireFiles != 2000 || o.RTT != 40*time.Millisecond || o.CapRate != 30e6 {
		t.Errorf("-quick -scenarios wire: %+v", o)
	}
	if _, err := parseFlags([]string{"-rtt", "-1s"}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-rtt must not be negative") {
		t.Errorf("-rtt -1s: %v", err)
	}
}
