package main

import (
	"fmt"
	"math"
)

// wireTargets are issue 23's targets, on the rows of the wire scenarios the
// run has: the large file at least 1.5× gcloud and 0.8× its limit both
// ways; the small files at the widest parallelism at least 0.8× j / RTT and
// 2× gcloud; over TLS, gcsput's MB per CPU second at least 0.9× http-crc's.
// Each wire scenario also says which of gcsput's protocol settings was the
// fastest, when it is not the default.
func (r *report) wireTargets() []target {
	var out []target
	small, hasSmall := r.widestWireSmall()
	for _, op := range []string{opUpload, opDownload} {
		out = append(out, r.ratioTarget(scenarioWireLarge, op, "× gcloud", 1.5, r.gcloudRate)...)
		out = append(out, r.ratioTarget(scenarioWireLarge, op, "× limit", 0.8, r.gcsputLimit)...)
		if hasSmall {
			out = append(out, r.ratioTarget(small.name, op, "× j/RTT", 0.8, r.gcsputLimit)...)
			out = append(out, r.ratioTarget(small.name, op, "× gcloud", 2.0, r.gcloudRate)...)
		}
		out = append(out, r.tlsCPUTarget(op)...)
	}
	for _, sc := range r.scenarios {
		if sc.wire && !sc.faults {
			for _, op := range []string{opUpload, opDownload} {
				out = append(out, r.bestVariant(sc, op)...)
			}
		}
	}
	return out
}

// gcsputLimit is the wire's limit for gcsput's default row in sc.
func (r *report) gcsputLimit(sc scenario, op string) float64 {
	return r.wireLimit(sc, op, clientGcsput)
}

// widestWireSmall is the wire's small-file scenario with the most
// parallelism (32 by default).
func (r *report) widestWireSmall() (scenario, bool) {
	var best scenario
	for _, sc := range r.scenarios {
		if sc.wire && sc.small && sc.parallel > best.parallel {
			best = sc
		}
	}
	return best, best.small
}

// tlsCPUTarget: over TLS, gcsput moves at least 0.9× the MB per CPU
// second http-crc does.
func (r *report) tlsCPUTarget(op string) []target {
	if _, ok := r.scenario(scenarioWireTLS); !ok {
		return nil
	}
	name := fmt.Sprintf("%s %s: gcsput MB per CPU s ≥ 0.9× %s over TLS", scenarioWireTLS, op, clientHTTPCRC)
	g, ok1 := r.row(rowKey{scenarioWireTLS, op, clientGcsput})
	h, ok2 := r.row(rowKey{scenarioWireTLS, op, clientHTTPCRC})
	if !ok1 || !ok2 || math.IsNaN(g.mbPerCPU) || math.IsNaN(h.mbPerCPU) {
		return []target{missing(name, "not measured")}
	}
	x := g.mbPerCPU / h.mbPerCPU
	return []target{judged(name, x >= 0.9, "%.2f× (%.0f vs %.0f MB per CPU s; %.0f vs %.0f MB/s)",
		x, g.mbPerCPU, h.mbPerCPU, g.mbps, h.mbps)}
}

// gcsputVariants are gcsput's rows on the wire: its default and the
// HTTP/2 settings.
var gcsputVariants = []string{clientGcsput, clientGcsputH2, clientGcsputH2x1, clientGcsputH2x4}

// bestVariant says, as information, which of gcsput's protocol settings
// was the fastest in sc when it was not the default.
func (r *report) bestVariant(sc scenario, op string) []target {
	def, ok := r.row(rowKey{sc.name, op, clientGcsput})
	if !ok {
		return nil
	}
	best, bestRate := clientGcsput, def.rate(sc)
	for _, c := range gcsputVariants[1:] {
		if rw, ok := r.row(rowKey{sc.name, op, c}); ok && rw.rate(sc) > bestRate {
			best, bestRate = c, rw.rate(sc)
		}
	}
	if best == clientGcsput {
		return nil
	}
	return []target{{
		name:   fmt.Sprintf("%s %s: fastest gcsput setting", sc.name, op),
		status: "info",
		detail: fmt.Sprintf("%s, %.2f× the default (%.1f vs %.1f)", best, bestRate/def.rate(sc), bestRate, def.rate(sc)),
	}}
}
