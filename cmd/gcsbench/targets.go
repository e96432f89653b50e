package main

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// target is one of the performance targets (issues 7 and 14), checked on
// this run, or a figure shown beside them ("info").
type target struct {
	name   string
	status string // "PASS", "FAIL", "info", or "n/a" when the run lacks a figure
	detail string
}

func judged(name string, ok bool, detail string, args ...any) target {
	t := target{name: name, status: "FAIL", detail: fmt.Sprintf(detail, args...)}
	if ok {
		t.status = "PASS"
	}
	return t
}

func missing(name, why string) target { return target{name: name, status: "n/a", detail: why} }

// targets checks the targets of issues 7 and 14 on gcsput's rows. A large
// upload is judged against the plain transfer that also checksums
// (clientHTTPCRC), which any verifying client must do; the sendfile
// loopback, which never shows the bytes to the process, is shown beside it.
func (r *report) targets() []target {
	var out []target
	out = append(out, r.ratioTarget(scenarioLarge, opUpload, "× official", 1.0, r.officialBest)...)
	out = append(out, r.ratioTarget(scenarioLarge, opUpload, "× "+clientHTTPCRC, 0.9, r.verifying)...)
	out = append(out, r.info(scenarioLarge, opUpload, "loopback (sendfile)", r.loopback)...)
	out = append(out, r.ratioTarget(scenarioLarge, opDownload, "× official", 1.0, r.officialBest)...)
	out = append(out, r.ratioTarget(scenarioLarge, opDownload, "× loopback", 0.8, r.loopback)...)
	out = append(out, r.info(scenarioLarge, opDownload, clientHTTPCRC, r.verifying)...)
	if sc, ok := r.widestSmall(); ok {
		out = append(out, r.ratioTarget(sc.name, opUpload, "× official best", 2.0, r.officialBest)...)
		out = append(out, r.ratioTarget(sc.name, opUpload, "× loopback", 0.5, r.loopback)...)
		out = append(out, r.ratioTarget(sc.name, opDownload, "× loopback", 0.7, r.loopback)...)
		out = append(out, r.rssTarget(sc.name, 128)...)
	}
	out = append(out, r.rssTarget(scenarioLarge, 64)...)
	out = append(out, r.faultTargets()...)
	for _, op := range []string{opUpload, opDownload} {
		out = append(out, r.ratioTarget(scenarioFaults, op, "× official", 1.0, r.officialBest)...)
	}
	out = append(out, r.cappedTargets()...)
	return append(out, r.wireTargets()...)
}

// ratioTarget checks gcsput's rate against a reference rate.
func (r *report) ratioTarget(scName, op, what string, want float64, ref func(scenario, string) float64) []target {
	sc, ok := r.scenario(scName)
	if !ok {
		return nil
	}
	name := fmt.Sprintf("%s %s: gcsput ≥ %.1f%s", scName, op, want, what)
	g, ok := r.row(rowKey{scName, op, clientGcsput})
	base := ref(sc, op)
	if !ok || math.IsNaN(base) {
		return []target{missing(name, "not measured")}
	}
	unit := "MB/s"
	if sc.small {
		unit = "files/s"
	}
	x := g.rate(sc) / base
	return []target{judged(name, x >= want, "%.2f× (%.0f vs %.0f %s)", x, g.rate(sc), base, unit)}
}

// rssTarget checks gcsput's peak RSS in a scenario of the run (none when
// the run left it out).
func (r *report) rssTarget(scName string, limitMiB float64) []target {
	name := fmt.Sprintf("%s upload: gcsput peak RSS ≤ %.0f MiB", scName, limitMiB)
	if _, ok := r.scenario(scName); !ok {
		return nil
	}
	g, ok := r.row(rowKey{scName, opUpload, clientGcsput})
	if !ok {
		return []target{missing(name, "not measured")}
	}
	detail := "%.0f MiB"
	if o, ok := r.row(rowKey{scName, opUpload, clientOfficial}); ok {
		detail += fmt.Sprintf(" (official client: %.0f MiB)", o.rssMiB)
	}
	return []target{judged(name, g.rssMiB <= limitMiB, detail, g.rssMiB)}
}

// faultTargets: under faults, gcsput sends at most one chunk more per fault,
// and its throughput, not counting the backoff it slept, stays ≥ 0.7× the
// fault-free large upload. Every round must hold. None when the run left
// the faults scenario out.
func (r *report) faultTargets() []target {
	if _, ok := r.scenario(scenarioFaults); !ok {
		return nil
	}
	bytesName := "faults upload: bytes fakegcs received ≤ size + one chunk per fault"
	speedName := "faults upload: MB/s excluding backoff sleep ≥ 0.7× fault-free"
	ss := r.samples[rowKey{scenarioFaults, opUpload, clientGcsput}]
	if len(ss) == 0 {
		return []target{missing(bytesName, "not measured"), missing(speedName, "not measured")}
	}
	bytesOK, worstExtra, worstFaults := true, int64(-1), 0
	var speeds []float64
	for _, s := range ss {
		extra := s.Moved - r.o.Size
		if extra > int64(s.Faults)*r.o.ChunkSize {
			bytesOK = false
		}
		if extra > worstExtra {
			worstExtra, worstFaults = extra, s.Faults
		}
		speeds = append(speeds, float64(s.Bytes)/math.Max(s.Seconds-s.Slept, 1e-9)/1e6)
	}
	out := []target{judged(bytesName, bytesOK, "worst round: %.1f MiB extra with %d faults (allowed %.0f MiB)",
		float64(worstExtra)/(1<<20), worstFaults, float64(int64(worstFaults)*r.o.ChunkSize)/(1<<20))}
	free, ok := r.row(rowKey{scenarioLarge, opUpload, clientGcsput})
	if !ok {
		return append(out, missing(speedName, "the fault-free large upload was not measured"))
	}
	speed := median(slices.Clone(speeds))
	return append(out, judged(speedName, speed >= 0.7*free.mbps, "%.2f× (%.0f vs %.0f MB/s)", speed/free.mbps, speed, free.mbps))
}

// widestSmall is the small-file scenario with the most parallelism (32 in
// the full run), the one issue 7's targets are about.
func (r *report) widestSmall() (scenario, bool) {
	var best scenario
	for _, sc := range r.scenarios {
		if sc.small && !sc.wire && sc.parallel > best.parallel {
			best = sc
		}
	}
	return best, best.small
}

func (r *report) scenario(name string) (scenario, bool) {
	for _, sc := range r.scenarios {
		if sc.name == name {
			return sc, true
		}
	}
	return scenario{}, false
}

func (r *report) writeTargets(w io.Writer) {
	ts := r.targets()
	if len(ts) == 0 {
		return
	}
	fmt.Fprintln(w, "\nTargets (issues 7, 14 and 23):")
	fmt.Fprintln(w)
	for _, t := range ts {
		fmt.Fprintf(w, "- %s %s: %s\n", t.status, t.name, t.detail)
	}
}

// verifying is the rate of the plain transfer that also checksums its
// bytes (clientHTTPCRC): the fastest any client that verifies what it moved
// can be here.
func (r *report) verifying(sc scenario, op string) float64 {
	if rw, ok := r.row(rowKey{sc.name, op, clientHTTPCRC}); ok {
		return rw.mbps
	}
	return math.NaN()
}

// info shows gcsput's rate against a reference that is not judged.
func (r *report) info(scName, op, what string, ref func(scenario, string) float64) []target {
	sc, ok := r.scenario(scName)
	if !ok {
		return nil
	}
	g, ok := r.row(rowKey{scName, op, clientGcsput})
	base := ref(sc, op)
	if !ok || math.IsNaN(base) || base == 0 {
		return nil
	}
	return []target{{
		name:   fmt.Sprintf("%s %s: gcsput vs %s", scName, op, what),
		status: "info",
		detail: fmt.Sprintf("%.2f× (%.0f vs %.0f MB/s)", g.mbps/base, g.mbps, base),
	}}
}
