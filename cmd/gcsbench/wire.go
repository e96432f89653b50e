package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// The wire scenarios (issue 23): every client talks to fakegcs as it would
// to storage.googleapis.com: over TLS, offered h2 and http/1.1 by ALPN,
// options.RTT away (fakegcs.Options.RTT), each TCP connection held to
// options.CapRate each way. Each client runs with its own defaults, or with
// one protocol setting changed (the gcsput-h2… and official-h1 rows), and
// the connections it opened are counted by fakegcs (Stats.Protocols). The
// large file goes up and down, the small files at each of
// options.WireParallel, and the faults scenario's fixed faults meet the
// large file. wire-tls is the TLS CPU figure: gcsput and http-crc over TLS
// with no RTT and no cap, on an idle wire, where only CPU limits them.

// wirePrefix starts every wire scenario's name; -scenarios wire selects
// them all.
const wirePrefix = "wire"

// The wire scenarios' names; the small-file ones are "wire-small-p<j>".
const (
	scenarioWireLarge  = "wire-large"
	scenarioWireFaults = "wire-faults"
	scenarioWireTLS    = "wire-tls"
)

// wireScenarios are the wire scenarios on d's wire files. Parallelism 0 is
// each client's default; the small files' -j is the scenario's.
func wireScenarios(o options, d *dataset) []scenario {
	large := []fileRef{d.Wire}
	out := []scenario{{name: scenarioWireLarge, files: large, wire: true}}
	for _, p := range o.WireParallel {
		out = append(out, scenario{name: fmt.Sprintf("%s-small-p%d", wirePrefix, p), files: d.WireSmall, parallel: p, small: true, wire: true})
	}
	return append(out, scenario{name: scenarioWireFaults, files: large, wire: true, faults: true},
		scenario{name: scenarioWireTLS, files: large, tls: true})
}

// wireNames are the names wireScenarios gives, for options.selects.
func wireNames(o options) []string {
	names := []string{scenarioWireLarge, scenarioWireFaults, scenarioWireTLS}
	for _, p := range o.WireParallel {
		names = append(names, fmt.Sprintf("%s-small-p%d", wirePrefix, p))
	}
	return names
}

// anyWire reports whether the run includes a wire scenario.
func anyWire(o options) bool { return slices.ContainsFunc(wireNames(o), o.selects) }

// anyPlain reports whether the run includes a plaintext scenario (one that
// needs the servers without TLS).
func anyPlain(o options) bool {
	return o.selects(scenarioLarge) || o.selects(scenarioFaults) || o.selects(scenarioCapped) || anyPlainSmall(o)
}

// startWire starts the wire scenarios' fakegcs servers: the wire's, which
// hold the wire's large and small files, and for wire-tls servers with TLS
// only, which hold the large one.
func (f *fakes) startWire(ctx context.Context, d *dataset, o options) (err error) {
	if !anyWire(o) {
		return nil
	}
	wire := fakegcs.Options{Seed: o.Seed, TLS: true, RTT: o.RTT, CapRate: o.CapRate}
	if f.wire, err = startSet(ctx, append([]fileRef{d.Wire}, d.WireSmall...), wire); err != nil {
		return err
	}
	if !o.selects(scenarioWireTLS) {
		return nil
	}
	f.tls, err = startSet(ctx, []fileRef{d.Wire}, fakegcs.Options{Seed: o.Seed, TLS: true})
	return err
}

// startWire starts the plain server over TLS and writes the certificate
// of each TLS server into a file of its own in the work directory, for the
// clients to trust (the CLIs read files). One file per server: each
// fakegcs makes its own certificate, all with the same subject, and
// OpenSSL (gcloud) picks one of a bundle by subject.
func (e *env) startWire() error {
	if !anyWire(e.o) {
		return nil
	}
	e.plainTLS = startPlain(e.data.Dir, true)
	dir := filepath.Join(e.work, "ca")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	e.caFiles = map[string]string{}
	write := func(url string, pem []byte) error {
		file := filepath.Join(dir, strings.NewReplacer(":", "_", "/", "_").Replace(url)+".pem")
		e.caFiles[url] = file
		return os.WriteFile(file, pem, 0o644)
	}
	for _, set := range []*fakeSet{e.fakes.wire, e.fakes.tls} {
		if set == nil {
			continue
		}
		for _, s := range []*fakegcs.Server{set.up, set.upMD5, set.down} {
			if err := write(s.URL(), s.CertPEM()); err != nil {
				return err
			}
		}
	}
	return write(e.plainTLS.url, e.plainTLS.certPEM)
}

// caFile is the certificate file of the server a client talks to in sc
// for op: none outside the wire scenarios.
func (e *env) caFile(c client, sc scenario, op string) string {
	switch {
	case !sc.wire && !sc.tls:
		return ""
	case c.name == clientHTTP || c.name == clientHTTPCRC:
		return e.caFiles[e.plainTLS.url]
	}
	return e.caFiles[e.fakes.server(c.name, op, sc).URL()]
}

// trusting is a TLS configuration that trusts the PEM certificates in
// file, or nil for "" (the system's roots).
func trusting(file string) (*tls.Config, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	return &tls.Config{RootCAs: pool}, nil
}

// wireStreams is how many data streams a client opens for one large
// object with its defaults: its connections' worth of the cap, if each
// stream had a connection of its own. gcloud's are gcloudParallel's
// processes × threads, gcsput's default streams; the official client and rclone (one stream per
// file there) send one.
func wireStreams(name string) int {
	switch {
	case clientParallel(name) > 0:
		return clientParallel(name)
	case strings.HasPrefix(name, clientGcsput):
		return cappedSlices
	case name == clientGcloud:
		return upload.DefaultMaxSlices
	}
	return 1
}

// clientParallel is the -j a gcsput row runs at whatever its scenario's:
// 16 and 32 for gcsput-j16 and gcsput-j32, 0 (the scenario's) for others.
func clientParallel(name string) int {
	switch name {
	case clientGcsputJ16:
		return 16
	case clientGcsputJ32:
		return 32
	}
	return 0
}
