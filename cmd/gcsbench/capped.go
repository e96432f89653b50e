package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/gcsput/gcsput/upload"
)

// The capped scenario: fakegcs holds every connection to options.CapRate
// each way (fakegcs.Options.CapRate), a model of GCS's per-connection rate
// on a real link, where a client goes faster only on more connections. The
// large file goes up and down with gcsput (its defaults: -j 12, sliced
// downloads of objects from 128 MiB in up to 12 slices, and whatever it does
// by default with a large upload), the official client (one stream, the
// scenario's chunks) and gcloud storage (gcloudParallel).

// cappedSlices is the most connections gcsput opens for one object with
// its defaults: its slices (and the data streams of an upload), bounded by
// its parallelism.
const cappedSlices = min(upload.DefaultMaxSlices, upload.DefaultParallelism)

// writeCapped prints the capped scenario's table: each client's rate as a
// number of capped connections' worth and against gcloud's.
func (r *report) writeCapped(w io.Writer) {
	if _, ok := r.scenario(scenarioCapped); !ok {
		return
	}
	capMBps := float64(r.o.CapRate) / 1e6
	var lines []string
	for _, rw := range r.rows() {
		if rw.scenario != scenarioCapped {
			continue
		}
		xCap := fmt.Sprintf("%.1f", rw.mbps/capMBps)
		if rw.client == clientGcsputUncapped {
			xCap = "(no cap)"
		}
		gcloud := math.NaN()
		if g, ok := r.row(rowKey{scenarioCapped, rw.op, clientGcloud}); ok {
			gcloud = g.mbps
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %.1f | %s | %s | %s | %.0f |",
			rw.op, rw.client, rw.mbps, xCap, fmtRatio(ratio(rw.mbps, gcloud)), fmtRatio(rw.xOfficial), rw.requests))
	}
	fmt.Fprintf(w, "\nCapped scenario (medians): fakegcs caps each connection at %s each way, a model of GCS's "+
		"per-connection rate on a real link. gcsput: its defaults (-j %d; downloads from %s in up to %d slices; "+
		"uploads as it does by default); official: one stream, %s chunks; gcloud: sliced downloads from %s in up to %d slices, "+
		"parallel composite uploads enabled from %s in gcsput's components, %d processes × %d threads; "+
		"%s: gcsput the same way on a server without the cap. \"× cap\": MB/s over the cap, the connections' worth of data moved\n",
		rateString(r.o.CapRate), upload.DefaultParallelism, sizeString(upload.DefaultSliceThreshold), upload.DefaultMaxSlices,
		sizeString(r.o.ChunkSize), sizeString(gcloudSliceThreshold), upload.DefaultMaxSlices,
		sizeString(gcloudCompositeThreshold), gcloudProcesses, upload.DefaultParallelism/gcloudProcesses, clientGcsputUncapped)
	fmt.Fprintln(w, "\n| op | client | MB/s | × cap | × gcloud | × official | requests |\n|---|---|--:|--:|--:|--:|--:|")
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}

// cappedTargets: in both directions gcsput is at least as fast as gcloud
// storage, and reaches 0.8× of what its connections allow: the smaller of
// cappedSlices capped connections and its own rate without the cap.
func (r *report) cappedTargets() []target {
	sc, ok := r.scenario(scenarioCapped)
	if !ok {
		return nil
	}
	var out []target
	for _, op := range []string{opUpload, opDownload} {
		vsGcloud := r.ratioTarget(sc.name, op, "× gcloud", 1.0, func(sc scenario, op string) float64 {
			if g, ok := r.row(rowKey{sc.name, op, clientGcloud}); ok {
				return g.mbps
			}
			return math.NaN()
		})
		if len(r.errors[rowKey{sc.name, op, clientGcloud}]) > 0 && len(vsGcloud) == 1 && vsGcloud[0].status == "n/a" {
			vsGcloud[0].detail = "gcloud failed in every round, so it could not be judged (see Failures)"
		}
		out = append(out, vsGcloud...)
		name := fmt.Sprintf("%s %s: gcsput ≥ 0.8× min(%d slices × cap, gcsput uncapped)", sc.name, op, cappedSlices)
		g, ok1 := r.row(rowKey{sc.name, op, clientGcsput})
		u, ok2 := r.row(rowKey{sc.name, op, clientGcsputUncapped})
		if !ok1 || !ok2 {
			out = append(out, missing(name, "not measured"))
			continue
		}
		slices := float64(cappedSlices) * float64(r.o.CapRate) / 1e6
		ref := math.Min(slices, u.mbps)
		x := g.mbps / ref
		out = append(out, judged(name, x >= 0.8, "%.2f× (%.0f vs min(%.0f, %.0f) MB/s)", x, g.mbps, slices, u.mbps))
	}
	return out
}
