package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// onWire reports whether the scenario called name is a wire scenario
// (wire-tls included).
func (r *report) onWire(name string) bool {
	sc, ok := r.scenario(name)
	return ok && (sc.wire || sc.tls)
}

// writeWire prints the wire scenarios' table and the TLS CPU figure.
func (r *report) writeWire(w io.Writer) {
	var lines []string
	for _, rw := range r.rows() {
		sc, _ := r.scenario(rw.scenario)
		if !sc.wire {
			continue
		}
		lines = append(lines, r.wireLine(sc, rw))
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nWire scenarios (medians of %d round(s), gcloud/rclone: %d): TLS offering h2 and http/1.1, %v round trip, "+
			"%s per connection each way; large file %s, %d × %s files. Each client at its defaults (gcloud: sliced downloads "+
			"and parallel composite uploads as in the capped scenario), or with the protocol its name says: gcsput-h2 is "+
			"--client-protocol http2 (one connection), gcsput-h2xN adds --http2-streams N, official-h1 forces HTTP/1.1. "+
			"Connections: those fakegcs accepted that carried requests, by protocol (+N: accepted without a request). "+
			"Limit: large files min(streams × cap, %s over TLS), small files j / RTT\n",
			r.o.Rounds, min(r.o.Rounds, r.o.CLIRounds), r.o.RTT, rateString(r.o.CapRate), sizeString(r.o.WireSize),
			r.o.WireFiles, sizeString(r.o.FileSize), clientHTTPCRC)
		fmt.Fprintln(w, "\n| scenario | op | client | rate | connections | limit | × limit | × gcloud | CPU s | faults | retries |")
		fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
	r.writeTLSCPU(w)
}

// wireLine is one row of the wire table.
func (r *report) wireLine(sc scenario, rw row) string {
	unit, format := "MB/s", "%.1f %s"
	if sc.small {
		unit, format = "files/s", "%.0f %s"
	}
	rate := rw.rate(sc)
	limit := r.wireLimit(sc, rw.op, rw.client)
	lim := "–"
	if !math.IsNaN(limit) {
		lim = fmt.Sprintf(format, limit, unit)
	}
	faults, retries := "–", "–"
	if sc.faults {
		faults = fmt.Sprintf("%.0f of %.0f", rw.faults, rw.armed)
		if rw.measured {
			retries = fmt.Sprintf("%.0f", rw.retries)
		}
	}
	return fmt.Sprintf("| %s | %s | %s | "+format+" | %s | %s | %s | %s | %.2f | %s | %s |",
		rw.scenario, rw.op, rw.client, rate, unit, fmtConns(rw), lim, fmtRatio(ratio(rate, limit)),
		fmtRatio(ratio(rate, r.gcloudRate(sc, rw.op))), rw.cpu, faults, retries)
}

// fmtConns shows a row's connections: "8 h1", "1 h2", "2 h2 + 1 h1", with
// "+N" for connections accepted that carried no request; "–" when they were
// not counted (the plain server).
func fmtConns(rw row) string {
	var parts []string
	carried := 0.0
	for _, p := range slices.Sorted(maps.Keys(rw.connsBy)) {
		short := strings.NewReplacer("HTTP/1.1", "h1", "HTTP/2.0", "h2").Replace(p)
		parts = append(parts, fmt.Sprintf("%.0f %s", rw.connsBy[p], short))
		carried += rw.connsBy[p]
	}
	slices.Reverse(parts) // h2 first
	if len(parts) == 0 && rw.conns == 0 {
		return "–"
	}
	s := strings.Join(parts, " + ")
	if extra := rw.conns - carried; extra > 0 {
		s += fmt.Sprintf(" (+%.0f)", extra)
	}
	return s
}

// wireLimit is what the wire allows a client in sc: for small files j / RTT
// files/s (one request per file, each a round trip, j at a time); for the
// large file the client's streams each on a capped connection, but no more
// than http-crc's rate over TLS here (the CPU's limit). The faults
// scenario has none.
func (r *report) wireLimit(sc scenario, op, client string) float64 {
	switch {
	case sc.faults || !sc.wire:
		return math.NaN()
	case sc.small:
		if r.o.RTT <= 0 {
			return math.NaN()
		}
		return float64(sc.parallel) / r.o.RTT.Seconds()
	}
	streams := float64(wireStreams(client)) * float64(r.o.CapRate) / 1e6
	if crc, ok := r.row(rowKey{scenarioWireTLS, op, clientHTTPCRC}); ok {
		return math.Min(streams, crc.mbps)
	}
	return streams
}

// gcloudRate is gcloud's rate in sc, NaN if it did not run.
func (r *report) gcloudRate(sc scenario, op string) float64 {
	if g, ok := r.row(rowKey{sc.name, op, clientGcloud}); ok {
		return g.rate(sc)
	}
	return math.NaN()
}

// writeTLSCPU prints wire-tls: gcsput and http-crc over TLS with no RTT and
// no cap, and the bytes each moved per CPU second of its own.
func (r *report) writeTLSCPU(w io.Writer) {
	var lines []string
	for _, rw := range r.rows() {
		if rw.scenario != scenarioWireTLS {
			continue
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %.1f | %.2f | %.0f | %s |",
			rw.op, rw.client, rw.mbps, rw.cpu, rw.mbPerCPU, fmtConns(rw)))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\nTLS CPU (%s, medians): the large file (%s) over TLS with no round trip and no cap, gcsput at its defaults "+
		"against fakegcs, %s (one stream, HTTP/1.1) against the plain server. The figure is MB moved per CPU second "+
		"of the client's process (user + system, start-up included): on a shared machine wall-clock MB/s measure the neighbours too\n",
		scenarioWireTLS, sizeString(r.o.WireSize), clientHTTPCRC)
	fmt.Fprintln(w, "\n| op | client | MB/s | CPU s | MB per CPU s | connections |\n|---|---|--:|--:|--:|--:|")
	fmt.Fprintln(w, strings.Join(lines, "\n"))
}
