package main

import (
	"errors"
	"fmt"

	"github.com/gcsput/gcsput/upload"
)

// printPlan prints what a sync would do (--dry-run), and what the delete
// guard would say: it returns the error of a sync the guard would refuse.
func (a *app) printPlan(p *upload.SyncPlan, asJSON bool) error {
	for _, c := range p.Copies {
		a.planLine(asJSON, "copy", c)
	}
	for _, d := range p.Deletes {
		a.planLine(asJSON, "delete", d)
	}
	var refused error
	var ge *upload.DeleteGuardError
	if errors.As(p.Refused, &ge) {
		refused = usagef("%s", guardMessage(ge))
	}
	if asJSON {
		sum := map[string]any{"type": "summary", "dry_run": true, "copy": len(p.Copies), "bytes": p.Bytes, "skip": p.Unchanged, "delete": len(p.Deletes)}
		if refused != nil {
			sum["refused"] = refused.Error()
		}
		if p.Withheld != "" {
			sum["deletes_withheld"], sum["withheld_because"] = len(p.Deletes), p.Withheld
		}
		if p.Failed > 0 {
			sum["failed"] = p.Failed
		}
		if p.Kept > 0 {
			sum["kept"] = p.Kept
		}
		printJSON(a.stdout, sum)
		return refused
	}
	line := fmt.Sprintf("dry run: %d to copy (%s), %d unchanged, %d to delete", len(p.Copies), formatSize(p.Bytes), p.Unchanged, len(p.Deletes))
	if p.Kept > 0 {
		line += fmt.Sprintf(", %d kept as the destination holds them (--no-clobber, -u)", p.Kept)
	}
	if p.Failed > 0 { // each printed above: without the count, "0 to copy" reads as "in sync"
		line += fmt.Sprintf(", %d would fail (above)", p.Failed)
	}
	switch {
	case refused != nil:
		line += "; the delete guard would refuse this sync (below)"
	case p.Withheld != "":
		line += fmt.Sprintf("; the %s would be withheld (%s)", plural(len(p.Deletes), "delete"), p.Withheld)
	}
	fmt.Fprintln(a.stderr, line+"; nothing was changed")
	return refused
}

// planLine prints one action of a dry run.
func (a *app) planLine(asJSON bool, action string, it upload.SyncItem) {
	switch {
	case asJSON:
		printJSON(a.stdout, map[string]any{"type": "plan", "action": action, "source": it.Source, "destination": it.Dest, "bytes": it.Size})
	case action == "delete":
		fmt.Fprintf(a.stdout, "would delete %10s  %s\n", formatSize(it.Size), escapeText(it.Dest))
	default:
		fmt.Fprintf(a.stdout, "would %-6s %10s  %s -> %s\n", action, formatSize(it.Size), escapeText(it.Source), escapeText(it.Dest))
	}
}
