package main

import "testing"

// TestWideRows: gcsput-j16 and gcsput-j32 run in wire-large only, at -j 16
// and 32, and the report's limit counts their streams (issue 31.3).
func TestWideRows(t *testing.T) {
	large := scenario{name: scenarioWireLarge, wire: true}
	others := []scenario{
		{name: "wire-small-p32", wire: true, small: true, parallel: 32},
		{name: scenarioWireFaults, wire: true, faults: true},
		{name: scenarioWireTLS, tls: true},
		{name: scenarioCapped, capped: true},
		{name: scenarioLarge},
	}
	for name, j := range map[string]int{clientGcsputJ16: 16, clientGcsputJ32: 32} {
		c, ok := clientByName(name)
		if !ok || !c.in(large) {
			t.Fatalf("%s: known %v, not in %s", name, ok, scenarioWireLarge)
		}
		for _, sc := range others {
			if c.in(sc) {
				t.Errorf("%s runs in %s", name, sc.name)
			}
		}
		if clientParallel(name) != j || wireStreams(name) != j {
			t.Errorf("%s: -j %d, %d streams; want %d", name, clientParallel(name), wireStreams(name), j)
		}
	}
	if clientParallel(clientGcsput) != 0 || wireStreams(clientGcsput) != cappedSlices {
		t.Errorf("gcsput: -j %d, %d streams; want the scenario's, %d", clientParallel(clientGcsput), wireStreams(clientGcsput), cappedSlices)
	}
}
