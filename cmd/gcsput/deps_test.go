package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoTestingPackage keeps test code out of the release binary:
// gcsput links fakegcs for its demo, and fakegcs must not pull in package testing.
func TestBinaryLinksNoTestingPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "testing" || strings.HasPrefix(p, "testing/") {
			t.Errorf("gcsput links %s", p)
		}
	}
}
