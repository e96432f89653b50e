package upload

import (
	"time"

	"github.com/gcsput/gcsput/internal/manifest"
	"github.com/gcsput/gcsput/internal/naming"
)

// inManifest is the Note of a transfer skipped because Options.Manifest
// records its source as done.
const inManifest = "in manifest"

// manifestSource names a result's source (or destination) as gcloud's
// manifest does: a gs:// URL as it is, a local path as file://PATH.
func manifestSource(src string) string {
	if naming.IsRemote(src) || src == "-" {
		return src
	}
	return "file://" + src
}

// manifested reports whether r's source is done by the manifest, and if so
// makes r a skip: the transfer is not started.
func (c *Client) manifested(r *Result) bool {
	if c.manifest == nil || !c.manifest.Done(manifestSource(r.Source)) {
		return false
	}
	r.Status, r.Note = StatusSkipped, inManifest
	return true
}

// addToManifest appends r's row to the manifest: every final result of a
// batch but those the manifest skipped, an interruption (a rerun resumes
// it) and a sync's deletion (no source). A write that fails is warned of
// once; the transfers go on.
func (c *Client) addToManifest(r *Result) {
	if c.manifest == nil || r.Source == "" || r.Status == StatusInterrupted || r.Status == StatusDeleted ||
		r.Status == StatusSkipped && r.Note == inManifest {
		return
	}
	row := manifest.Row{Source: manifestSource(r.Source), Destination: manifestSource(r.Dest), End: time.Now(),
		Size: r.Size, Transferred: r.Transferred, Result: manifest.OK}
	row.Start = row.End.Add(-r.Elapsed)
	if naming.IsRemote(r.Dest) && r.Bucket != "" {
		row.Destination = URL{Bucket: r.Bucket, Object: r.Object}.String() // versionless
	}
	switch r.Status {
	case StatusSkipped:
		row.Result, row.Description = manifest.Skip, r.Note
	case StatusFailed:
		row.Result = manifest.Error
		if r.Err != nil {
			row.Description = r.Err.Error()
		}
	}
	if err := c.manifest.Add(row); err != nil {
		c.manifestWarn.Do(func() { c.warn(err.Error() + ": no more rows are written to it") })
	}
}
