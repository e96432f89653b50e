package main

import (
	"fmt"
	"math"

	"github.com/gcsput/gcsput/fakegcs"
)

// The faults scenario's faults. In -fault-mode fixed every client meets the
// same faults at the same places, in the same order, so their rates compare; in -fault-mode random each request fails with a
// probability, drawn from one stream that the clients' different request
// counts share out differently (the mode of issue 7's table).

// fixedFaults are the faults of -fault-mode fixed for an object of size
// bytes that chunked clients send in chunks of chunk bytes. Each fires once,
// on a request every client makes whether it sends its data in chunks
// (gcsput, the official client) or in one request to the end (gcloud): the
// initiation, the first request that carries data (from byte 0), the one
// that completes the upload; and for downloads the downloads of content
// (fakegcs.PhaseMedia), not the metadata gets some clients make first. A
// resumed download starts where the client's bytes stopped, so its fault
// is placed by the bytes it lets through.
func fixedFaults(op string, size, chunk int64) []fakegcs.Fault {
	if op == opUpload {
		const ins = "storage.objects.insert"
		first := min(chunk, size)
		return []fakegcs.Fault{
			// The server refuses to open the session.
			{Op: ins, Phase: fakegcs.PhaseInitiate, Kind: fakegcs.KindStatus, Status: 503},
			// It refuses the first data from byte 0, storing none of it.
			{Op: ins, Phase: fakegcs.PhaseChunk, Offset: new(int64(0)), Kind: fakegcs.KindStatus, Status: 503},
			// The connection breaks halfway through the first chunk (within
			// the first request of every client), of which the first
			// quarter was persisted.
			{Op: ins, Phase: fakegcs.PhaseChunk, Offset: new(int64(0)), Kind: fakegcs.KindReset,
				AfterBytes: first / 2, Persist: first / 4},
			// The request that completes the upload is processed, but its
			// answer is lost.
			{Op: ins, Phase: fakegcs.PhaseFinal, Kind: fakegcs.KindDropResponse},
		}
	}
	const get = "storage.objects.get"
	return []fakegcs.Fault{
		// The first download is refused.
		{Op: get, Phase: fakegcs.PhaseMedia, Kind: fakegcs.KindStatus, Status: 503},
		// Its retry, from byte 0, is cut after 25 % of the object.
		{Op: get, Phase: fakegcs.PhaseMedia, Offset: new(int64(0)), Kind: fakegcs.KindTruncate, AfterBytes: size / 4},
		// The resumed download is reset after a further 35 % (at 60 %).
		{Op: get, Phase: fakegcs.PhaseMedia, Kind: fakegcs.KindReset, AfterBytes: size * 35 / 100},
	}
}

// randomFaults is the mix of -fault-mode random: what a flaky network and an
// overloaded server do to a transfer. Each gets an equal share of the rate.
func randomFaults(op string, chunk int64, rate float64) []fakegcs.Fault {
	kinds := []fakegcs.Fault{
		{Op: "storage.objects.get", Kind: fakegcs.KindStatus, Status: 503},
		{Op: "storage.objects.get", Kind: fakegcs.KindTruncate, AfterBytes: chunk},
		{Op: "storage.objects.get", Kind: fakegcs.KindReset},
	}
	if op == opUpload {
		kinds = []fakegcs.Fault{
			// The server refuses the request before reading its body.
			{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 503},
			// The connection breaks halfway through a chunk, of which the
			// first quarter was persisted.
			{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindReset, AfterBytes: chunk / 2, Persist: chunk / 4},
			// The chunk is persisted but the answer is lost.
			{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindDropResponse},
		}
	}
	// Faults are tried in order, each with probability p, so that
	// 1-(1-p)^k = rate.
	p := 1 - math.Pow(1-rate, 1/float64(len(kinds)))
	for i := range kinds {
		kinds[i].Probability = p
	}
	return kinds
}

// injectFaults arms the faults scenario's faults for op on srv, for an
// object of size bytes.
func (f *fakes) injectFaults(srv *fakegcs.Server, op string, size int64, o options) error {
	faults := randomFaults(op, o.ChunkSize, o.FaultRate)
	if o.FaultMode == faultsFixed {
		faults = fixedFaults(op, size, o.ChunkSize)
	}
	for _, k := range faults {
		in, err := srv.TryInject(k)
		if err != nil {
			return fmt.Errorf("injecting %v: %w", k, err)
		}
		f.faults = append(f.faults, in)
	}
	return nil
}

// clearFaults disarms the faults and returns how many fired, and of fixed
// faults how many were armed (random ones may fire any number of times).
func (f *fakes) clearFaults() (fired, armed int) {
	for _, in := range f.faults {
		in.Remove()
		fired += in.Fired()
		if in.Fault().Probability == 0 {
			armed++
		}
	}
	f.faults = nil
	return fired, armed
}
