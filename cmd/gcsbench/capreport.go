package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gcsput/gcsput/upload"
)

// capacityReport holds the capacity scenario's measurements and prints its
// tables and targets.
type capacityReport struct {
	o    options
	runs []capRun
}

func (rep *capacityReport) add(r capRun) { rep.runs = append(rep.runs, r) }

// find returns the measurement of client in bucket at rtt (op for the
// large file).
func (rep *capacityReport) find(rtt time.Duration, bucket, client, op string) (capRun, bool) {
	for _, r := range rep.runs {
		if r.rtt == rtt && r.bucket == bucket && r.client == client && r.op == op {
			return r, r.err == nil
		}
	}
	return capRun{}, false
}

func (rep *capacityReport) write(w io.Writer) {
	o := rep.o
	fmt.Fprintf(w, "Capacity scenario: %d files of %s into a bucket admitting %.0f writes/s with one second's burst "+
		"(429 beyond it; \"growing\": doubling every %v while the load stays near it), over TLS offering h2, %s per connection; "+
		"gcsput and gcsput -j 32 run `gcsput cp -r`, gcloud storage and the official client %d streams. "+
		"\"× capacity\": files/s over the bucket's mean capacity during the run (above 1: the burst).\n\n",
		o.CapacityFiles, sizeString(capacityFileSize), o.CapacityRate, o.CapacityDoubling, rateString(o.CapRate), upload.DefaultParallelism)
	fmt.Fprintln(w, "| RTT | bucket | client | files | s | files/s | capacity/s | × capacity | 429s per 1,000 writes |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|--:|")
	for _, r := range rep.runs {
		if r.bytes > 0 {
			continue
		}
		if r.err != nil {
			fmt.Fprintf(w, "| %v | %s | %s | failed: %s | | | | | |\n", r.rtt, r.bucket, r.client, oneLine(r.err))
			continue
		}
		fmt.Fprintf(w, "| %v | %s | %s | %d | %.1f | %.0f | %.0f | %.2f | %.0f |\n",
			r.rtt, r.bucket, r.client, r.files, r.secs, r.filesps(), r.capacity, r.share(), r.per1000())
	}
	fmt.Fprintf(w, "\nLarge file: %s on a link of %v, %s per connection (%d connections: %s), with no total and with a total of %s.\n\n",
		sizeString(o.CapacitySize), capacityLargeRTT, rateString(capacityConnRate), capacitySlices,
		rateString(capacitySlices*capacityConnRate), rateString(o.CapacityLink))
	fmt.Fprintln(w, "| link | op | client | MB/s | × 8 connections | × total |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|")
	for _, r := range rep.runs {
		if r.bytes == 0 {
			continue
		}
		if r.err != nil {
			fmt.Fprintf(w, "| %s | %s | %s | failed: %s | | |\n", r.bucket, r.op, r.client, oneLine(r.err))
			continue
		}
		xTotal := "–"
		if r.bucket == "link+total" {
			xTotal = fmt.Sprintf("%.2f", r.mbps()/(float64(o.CapacityLink)/1e6))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.0f | %.2f | %s |\n", r.bucket, r.op, r.client, r.mbps(),
			r.mbps()/(capacitySlices*capacityConnRate/1e6), xTotal)
	}
	fmt.Fprintln(w, "\nCapacity targets (issue 31):")
	fmt.Fprintln(w)
	for _, t := range rep.targets() {
		fmt.Fprintf(w, "- %s: %s (%s)\n", t.status, t.name, t.detail)
	}
}

// targets are issue 31's, on gcsput's rows.
func (rep *capacityReport) targets() []target {
	var out []target
	for _, rtt := range capacityRTTs {
		g, gok := rep.find(rtt, "fixed", clientGcloud, opUpload)
		for _, cl := range []string{clientGcsput, clientGcsput + " -j 32"} {
			name := fmt.Sprintf("%v %s: ≥ 0.9× capacity, ≤ 20 429s per 1,000 writes, ≥ 1.25× gcloud", rtt, cl)
			r, ok := rep.find(rtt, "fixed", cl, opUpload)
			if !ok || !gok {
				out = append(out, missing(name, "not measured"))
				continue
			}
			x := r.filesps() / g.filesps()
			out = append(out, judged(name, r.share() >= 0.9 && r.per1000() <= 20 && x >= 1.25,
				"%.2f× capacity, %.0f per 1,000, %.2f× gcloud", r.share(), r.per1000(), x))
		}
	}
	growRTT := capacityRTTs[len(capacityRTTs)-1]
	for _, cl := range []string{clientGcsput, clientGcsput + " -j 32"} {
		name := fmt.Sprintf("growing capacity, %v %s: ≥ 0.85× the capacity integrated over the run", growRTT, cl)
		if r, ok := rep.find(growRTT, "growing", cl, opUpload); ok {
			out = append(out, judged(name, r.share() >= 0.85, "%.2f× (%.0f files/s, mean capacity %.0f)", r.share(), r.filesps(), r.capacity))
		} else {
			out = append(out, missing(name, "not measured"))
		}
	}
	for _, rtt := range capacityRTTs {
		name := fmt.Sprintf("%v two gcsput processes: together ≥ 0.9× capacity, each ≥ 0.8× a fair share", rtt)
		t, ok := rep.find(rtt, "fixed", "2 × gcsput", opUpload)
		p1, ok1 := rep.find(rtt, "fixed", "2 × gcsput: process 1", opUpload)
		p2, ok2 := rep.find(rtt, "fixed", "2 × gcsput: process 2", opUpload)
		if !ok || !ok1 || !ok2 {
			out = append(out, missing(name, "not measured"))
			continue
		}
		each := math.Min(p1.share(), p2.share())
		out = append(out, judged(name, t.share() >= 0.9 && each >= 0.8,
			"together %.2f×, %.0f per 1,000; each %.2f× and %.2f× of half", t.share(), t.per1000(), p1.share(), p2.share()))
	}
	for _, op := range []string{opUpload, opDownload} {
		name := fmt.Sprintf("large %s, no total: gcsput ≥ 0.8× %d × per-connection rate", op, capacitySlices)
		if r, ok := rep.find(capacityLargeRTT, "link", clientGcsput, op); ok {
			x := r.mbps() / (capacitySlices * capacityConnRate / 1e6)
			out = append(out, judged(name, x >= 0.8, "%.2f× (%.0f MB/s)", x, r.mbps()))
			// The bar is the issue's, 8 connections; gcsput's default
			// opens more, and what it makes of them is said beside it.
			own := float64(upload.DefaultParallelism) * capacityConnRate / 1e6
			out = append(out, target{name: fmt.Sprintf("large %s, no total: gcsput × its %d streams' rate", op, upload.DefaultParallelism),
				status: "info", detail: fmt.Sprintf("%.2f× (%.0f of %.0f MB/s)", r.mbps()/own, r.mbps(), own)})
		} else {
			out = append(out, missing(name, "not measured"))
		}
		name = fmt.Sprintf("large %s, total %s: gcsput ≥ 0.85× the total", op, rateString(rep.o.CapacityLink))
		if r, ok := rep.find(capacityLargeRTT, "link+total", clientGcsput, op); ok {
			x := r.mbps() / (float64(rep.o.CapacityLink) / 1e6)
			out = append(out, judged(name, x >= 0.85, "%.2f× (%.0f MB/s)", x, r.mbps()))
		} else {
			out = append(out, missing(name, "not measured"))
		}
	}
	return out
}

// oneLine is an error's text on one line, for a table cell.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "|", "/")), " ")
}
