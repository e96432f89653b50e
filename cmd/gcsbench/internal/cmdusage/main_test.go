package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gcsput/gcsput/cmd/gcsbench/internal/usage"
)

// TestRunCommand: an exit code is reported, not an error; a command stopped
// because stdin ended (here: the context) is an error.
func TestRunCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	sp := usage.Spec{Args: []string{sh, "-c", "echo out; echo err >&2; exit 3"},
		Stdout: filepath.Join(dir, "out"), Stderr: filepath.Join(dir, "err")}
	res := runCommand(t.Context(), sp)
	if res.ExitCode != 3 || res.Error != "" || res.End < res.Start || res.PeakRSS <= 0 {
		t.Errorf("exit 3: %+v", res)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if res := runCommand(ctx, sp); res.Error == "" {
		t.Errorf("cancelled: %+v", res)
	}
}
