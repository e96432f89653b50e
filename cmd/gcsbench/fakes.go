package main

import (
	"context"
	"os"
	"strings"

	"github.com/gcsput/gcsput/fakegcs"
)

// bucketName is the one bucket of both fakes.
const bucketName = "gcsbench"

// fakes are the fakegcs servers of a run, in the parent process.
type fakes struct {
	free, capped *fakeSet
	// wire serves the wire scenarios (TLS offering h2, RTT, cap), tls the
	// TLS CPU scenario (TLS offering h2, nothing else).
	wire, tls *fakeSet
	// faults are the injections of the running faults scenario.
	faults []*fakegcs.Injection
}

// fakeSet is one server per use. up keeps only sizes and CRC32Cs (the
// discard backend, MD5 off), so an upload measures the client. upMD5 is the
// same with MD5, for gcloud, which checks an upload by comparing its own MD5
// with the object's md5Hash (as GCS has one for every uploaded object); its
// cost shows in "srv CPU s". down holds the data, with both hashes, in
// memory for the downloads.
type fakeSet struct {
	up, upMD5, down *fakegcs.Server
}

// startFakes starts the servers without a cap, which hold every file, and
// with capRate > 0 those of the capped scenario, whose download server holds
// the large file only; with wire scenarios, theirs (startWireFakes).
func startFakes(ctx context.Context, d *dataset, o options, capRate int64) (f *fakes, err error) {
	f = &fakes{}
	defer func() {
		if err != nil {
			f.close()
		}
	}()
	if anyPlain(o) {
		free := fakegcs.Options{Seed: o.Seed}
		if f.free, err = startSet(ctx, append([]fileRef{d.Large}, d.Small...), free); err != nil {
			return f, err
		}
	}
	if capRate > 0 {
		if f.capped, err = startSet(ctx, []fileRef{d.Large}, fakegcs.Options{Seed: o.Seed, CapRate: capRate}); err != nil {
			return f, err
		}
	}
	return f, f.startWire(ctx, d, o)
}

// startSet starts a set of servers with opts, to which it adds each one's
// backend, bucket and hashes.
func startSet(ctx context.Context, files []fileRef, opts fakegcs.Options) (set *fakeSet, err error) {
	set = &fakeSet{}
	defer func() {
		if err != nil {
			set.close()
		}
	}()
	start := func(backend string, md5 bool) (*fakegcs.Server, error) {
		o := opts
		o.Backend, o.Buckets, o.DisableMD5 = backend, []string{bucketName}, !md5
		return fakegcs.New(o)
	}
	if set.up, err = start(fakegcs.BackendDiscard, false); err != nil {
		return set, err
	}
	if set.upMD5, err = start(fakegcs.BackendDiscard, true); err != nil {
		return set, err
	}
	if set.down, err = start(fakegcs.BackendMemory, true); err != nil {
		return set, err
	}
	for _, ref := range files {
		if err := ctx.Err(); err != nil {
			return set, err
		}
		if err := set.store(ref); err != nil {
			return set, err
		}
	}
	return set, nil
}

// store puts a source file on the download server under dataPrefix.
func (set *fakeSet) store(ref fileRef) error {
	file, err := os.Open(ref.Path)
	if err != nil {
		return err
	}
	defer file.Close()
	_, err = set.down.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: bucketName, Name: dataPrefix + ref.Object}, file)
	return err
}

func (set *fakeSet) close() {
	if set == nil {
		return
	}
	for _, s := range []*fakegcs.Server{set.up, set.upMD5, set.down} {
		if s != nil {
			s.Close()
		}
	}
}

func (f *fakes) close() {
	for _, set := range []*fakeSet{f.free, f.capped, f.wire, f.tls} {
		set.close()
	}
}

// server returns the fake a client talks to for op in sc: a capped one in
// the capped scenario, except for clientGcsputUncapped, the wire's in the
// wire scenarios.
func (f *fakes) server(clientName, op string, sc scenario) *fakegcs.Server {
	set := f.free
	switch {
	case sc.wire:
		set = f.wire
	case sc.tls:
		set = f.tls
	case sc.capped && clientName != clientGcsputUncapped:
		set = f.capped
	}
	switch {
	case op == opDownload:
		return set.down
	case clientName == clientGcloud || clientName == clientRclone:
		return set.upMD5
	}
	return set.up
}

// moved is how many body bytes a run moved, from the server's stats before
// and after it: for an upload the bytes its resumable sessions (objects
// under prefix) received, re-sent and thrown-away bytes included; without
// sessions (multipart uploads), every request body; for a download every
// response body.
func moved(before, after fakegcs.Stats, op, prefix string) int64 {
	if op == opDownload {
		return after.BytesOut - before.BytesOut
	}
	var n int64
	found := false
	// The prefix is the run's own (client, scenario, round), so every
	// session under it is this run's.
	for _, s := range after.Sessions {
		if strings.HasPrefix(s.Object, prefix) {
			n += s.Received
			found = true
		}
	}
	if !found {
		return after.BytesIn - before.BytesIn
	}
	return n
}

// uploaded returns size and CRC32C of every object under prefix on srv, by
// name without the prefix.
func uploaded(srv *fakegcs.Server, prefix string) (map[string]objectSum, error) {
	names, err := srv.ObjectNames(bucketName)
	if err != nil {
		return nil, err
	}
	out := map[string]objectSum{}
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		a, err := srv.Attrs(bucketName, n)
		if err != nil {
			return nil, err
		}
		out[rest] = objectSum{Size: a.Size, CRC32C: a.CRC32C}
	}
	return out, nil
}
