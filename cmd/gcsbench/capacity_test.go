package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The capacity scenario runs only when named, with its defaults.
func TestCapacitySelection(t *testing.T) {
	o, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.selects(scenarioCapacity) {
		t.Error("the capacity scenario runs by default; it takes minutes and should run only when named")
	}
	o, err = parseFlags([]string{"-scenarios", "capacity", "-capacity-rate", "500", "-capacity-link", "80MB"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !o.selects(scenarioCapacity) || o.selects(scenarioLarge) || o.CapacityRate != 500 || o.CapacityLink != 80e6 ||
		o.CapacityFiles != 2000 || o.CapacitySize != 256<<20 || o.CapacityDoubling != 5*time.Second {
		t.Errorf("-scenarios capacity: %+v", o)
	}
	for _, args := range []string{"-capacity-rate 0", "-capacity-files -1", "-capacity-doubling 0s"} {
		if _, err := parseFlags(strings.Fields(args), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("%s: %v", args, err)
		}
	}
}

// The targets judge gcsput's rows against the capacity, gcloud, the fair
// share and the link: each figure computed from files, seconds, refusals.
func TestCapacityTargets(t *testing.T) {
	o, _ := parseFlags([]string{"-scenarios", "capacity"}, &bytes.Buffer{})
	rep := &capacityReport{o: o}
	ms := time.Millisecond
	for _, rtt := range capacityRTTs {
		rep.add(capRun{rtt: rtt, bucket: "fixed", client: clientGcloud, op: opUpload, files: 2000, secs: 10, capacity: 300})
		// 2000 files in 7 s at 300/s: 0.95× capacity, 1.43× gcloud; 10 refusals: 5 per 1,000.
		rep.add(capRun{rtt: rtt, bucket: "fixed", client: clientGcsput, op: opUpload, files: 2000, secs: 7, capacity: 300, refused: 10})
		// -j 32: 0.57× capacity, 51 per 1,000.
		rep.add(capRun{rtt: rtt, bucket: "fixed", client: clientGcsput + " -j 32", op: opUpload, files: 2000, secs: 11.7, capacity: 300, refused: 102})
	}
	rep.add(capRun{rtt: 20 * ms, bucket: "growing", client: clientGcsput, op: opUpload, files: 2000, secs: 5, capacity: 450})
	rep.add(capRun{rtt: capacityLargeRTT, bucket: "link", client: clientGcsput, op: opUpload, bytes: 256 << 20, secs: 2})
	var out bytes.Buffer
	rep.write(&out)
	for _, want := range []string{
		"- PASS: 5ms gcsput: ≥ 0.9× capacity, ≤ 20 429s per 1,000 writes, ≥ 1.25× gcloud (0.95× capacity, 5 per 1,000, 1.43× gcloud)",
		"- FAIL: 20ms gcsput -j 32: ≥ 0.9× capacity, ≤ 20 429s per 1,000 writes, ≥ 1.25× gcloud (0.57× capacity, 51 per 1,000, 0.85× gcloud)",
		"- PASS: growing capacity, 20ms gcsput: ≥ 0.85× the capacity integrated over the run (0.89× (400 files/s, mean capacity 450))",
		"- n/a: growing capacity, 20ms gcsput -j 32",
		"- n/a: 5ms two gcsput processes",
		"- PASS: large upload, no total: gcsput ≥ 0.8× 8 × per-connection rate (0.84× (134 MB/s))",
		"| 20ms | fixed | gcsput -j 32 | 2000 | 11.7 | 171 | 300 | 0.57 | 51 |",
		"| link | upload | gcsput | 134 | 0.84 | – |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
}
