package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// The capacity scenario (issue 31): clients at GCS's limits. Small files go
// into a bucket with a write capacity (fakegcs.Limits: capacityRate writes a
// second, one second's burst, 429 beyond it), over TLS offering h2 and
// http/1.1, options.CapRate per connection, at each of capacityRTTs; then
// into one whose capacity grows while the load stays near it (Doubling);
// then two gcsput processes at once on one bucket. A large file goes up and
// down on a link of capacityLargeRTT and capacityConnRate per connection,
// with no total and with a total limit (Limits.LinkRate). Every measurement
// has a fakegcs of its own. It runs only when named: -scenarios capacity.
const (
	scenarioCapacity = "capacity"
	capacityFileSize = 16 << 10
	capacityPrefix   = "cap/"
	capacityLargeRTT = 60 * time.Millisecond
	capacityConnRate = 20_000_000 // bytes per second per connection, the large file's link
	capacitySlices   = 8          // the connections issue 31's large-file targets count (gcsput's -j was 8)
)

// capacityRTTs are the small files' round-trip times: a same-region VM and
// a nearby one.
var capacityRTTs = []time.Duration{5 * time.Millisecond, 20 * time.Millisecond}

// capacityEnv is what the capacity scenario's measurements share.
type capacityEnv struct {
	o      options
	dir    string
	gcsput string
	log    io.Writer
	small  string    // the small files' directory
	files  []fileRef // its files
	halves [2]string // the same files split in two, one directory for each of two processes
	large  fileRef
	n      int // measurements so far, to name their directories
}

// capRun is one measurement.
type capRun struct {
	rtt      time.Duration
	bucket   string // "fixed", "growing", "link", "link+total"
	client   string
	op       string // opUpload or opDownload (large)
	files    int
	secs     float64
	capacity float64 // writes a second: the mean of the bucket's capacity over the run
	refused  int     // requests fakegcs refused under its limits
	bytes    int64   // the large file's size
	err      error
}

func (r capRun) filesps() float64 { return float64(r.files) / r.secs }
func (r capRun) share() float64   { return r.filesps() / r.capacity }
func (r capRun) per1000() float64 { return 1000 * float64(r.refused) / float64(r.files) }
func (r capRun) mbps() float64    { return float64(r.bytes) / r.secs / 1e6 }

// run builds gcsput and the data, then measures everything into rep.
func (c *capacityEnv) run(ctx context.Context, rep *capacityReport) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	var err error
	if _, c.gcsput, err = buildTools(ctx, c.o.Gcsput, c.dir); err != nil {
		return err
	}
	if err := c.generate(); err != nil {
		return err
	}
	if len(c.o.CapacityGrowingJ) > 0 {
		c.growingOnly(ctx, rep)
		return ctx.Err()
	}
	if len(c.o.CapacityLargeJ) > 0 {
		c.largeOnly(ctx, rep)
		return ctx.Err()
	}
	if !c.o.CapacityLargeOnly {
		c.smallFiles(ctx, rep)
	}
	// gcloud's large file is measured on the link without a total, for
	// comparison; with it, only gcsput's is judged.
	for _, total := range []int64{0, c.o.CapacityLink} {
		for _, cl := range []string{clientGcsput, clientGcloud} {
			if c.o.CapacityLargeOnly && cl != clientGcsput && (len(c.o.Clients) == 0 || !c.o.wantsClient(cl)) {
				continue
			}
			for _, op := range []string{opUpload, opDownload} {
				if total == 0 || cl == clientGcsput {
					rep.add(c.large1(ctx, total, cl, op))
				}
			}
		}
	}
	return ctx.Err()
}

// smallFiles measures the small files: each client in the fixed bucket at
// each round trip, gcsput in the growing bucket, two gcsput processes.
func (c *capacityEnv) smallFiles(ctx context.Context, rep *capacityReport) {
	rate := c.o.CapacityRate
	fixed := fakegcs.Limits{WriteRate: rate, WriteBurst: rate}
	growing := fixed
	growing.Doubling = c.o.CapacityDoubling
	smallClients := []string{clientGcsput, gcsputAt(32), clientGcloud, clientOfficial}
	for _, rtt := range capacityRTTs {
		for _, cl := range smallClients {
			rep.add(c.small1(ctx, rtt, "fixed", fixed, cl))
		}
	}
	// Growth is judged on gcsput's rows; the other clients, several times
	// below the capacity in the fixed bucket already, would only lengthen
	// the run.
	growRTT := capacityRTTs[len(capacityRTTs)-1]
	for _, cl := range smallClients[:2] {
		rep.add(c.small1(ctx, growRTT, "growing", growing, cl))
	}
	for _, rtt := range capacityRTTs {
		for _, r := range c.twoProcesses(ctx, rtt, fixed) {
			rep.add(r)
		}
	}
}

// growingOnly measures gcsput in the growing bucket at each -j of
// -capacity-growing-j, and nothing else.
func (c *capacityEnv) growingOnly(ctx context.Context, rep *capacityReport) {
	growing := fakegcs.Limits{WriteRate: c.o.CapacityRate, WriteBurst: c.o.CapacityRate, Doubling: c.o.CapacityDoubling}
	for _, j := range c.o.CapacityGrowingJ {
		rep.add(c.small1(ctx, capacityRTTs[len(capacityRTTs)-1], "growing", growing, gcsputAt(j)))
	}
}

// gcsputAt is the name of gcsput's row at -j j ("gcsput -j 12"; 0: at its
// defaults, "gcsput"), and jobsOf the flags a row's name asks for.
func gcsputAt(j int) string {
	if j > 0 {
		return fmt.Sprintf("%s -j %d", clientGcsput, j)
	}
	return clientGcsput
}

func jobsOf(client string) []string {
	if j, ok := strings.CutPrefix(client, clientGcsput+" -j "); ok {
		return []string{"-j", j}
	}
	return nil
}

// largeOnly moves the large file both ways on both links with gcsput at
// each -j of -capacity-large-j, and nothing else.
func (c *capacityEnv) largeOnly(ctx context.Context, rep *capacityReport) {
	for _, total := range []int64{0, c.o.CapacityLink} {
		for _, j := range c.o.CapacityLargeJ {
			for _, op := range []string{opUpload, opDownload} {
				rep.add(c.large1(ctx, total, gcsputAt(j), op))
			}
		}
	}
}

// generate writes the small files (in the directory and in two halves)
// and the large file.
func (c *capacityEnv) generate() error {
	c.small = filepath.Join(c.dir, "small")
	c.halves = [2]string{filepath.Join(c.dir, "half0"), filepath.Join(c.dir, "half1")}
	for _, d := range []string{c.small, c.halves[0], c.halves[1]} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(c.o.Seed, 31))
	buf := make([]byte, capacityFileSize)
	for i := range c.o.CapacityFiles {
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		name := fmt.Sprintf("f%05d", i)
		for _, p := range []string{filepath.Join(c.small, name), filepath.Join(c.halves[i%2], name)} {
			if err := os.WriteFile(p, buf, 0o644); err != nil {
				return err
			}
		}
		c.files = append(c.files, fileRef{Path: filepath.Join(c.small, name), Object: "small/" + name, Size: capacityFileSize})
	}
	c.large = fileRef{Path: filepath.Join(c.dir, "large"), Object: "large", Size: c.o.CapacitySize}
	f, err := os.Create(c.large.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	for left := c.o.CapacitySize; left > 0; left -= int64(len(block)) {
		for j := 0; j < len(block); j += 8 {
			v := rng.Uint64()
			for k := range 8 {
				block[j+k] = byte(v >> (8 * k))
			}
		}
		if _, err := f.Write(block[:min(left, int64(len(block)))]); err != nil {
			return err
		}
	}
	return f.Close()
}

// capServer starts one measurement's fakegcs and writes its certificate.
func (c *capacityEnv) capServer(opts fakegcs.Options) (*fakegcs.Server, string, string, error) {
	c.n++
	dir := filepath.Join(c.dir, fmt.Sprintf("run%02d", c.n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", "", err
	}
	opts.TLS, opts.Buckets = true, []string{bucketName}
	srv, err := fakegcs.New(opts)
	if err != nil {
		return nil, "", "", err
	}
	cert := filepath.Join(dir, "fakegcs.pem")
	if err := os.WriteFile(cert, srv.CertPEM(), 0o600); err != nil {
		srv.Close()
		return nil, "", "", err
	}
	return srv, cert, dir, nil
}

// capacityMeter integrates a bucket's write capacity over a run, sampled
// every 20 ms.
type capacityMeter struct {
	stop chan struct{}
	done chan float64
}

func meterCapacity(srv *fakegcs.Server, base float64) *capacityMeter {
	m := &capacityMeter{stop: make(chan struct{}), done: make(chan float64, 1)}
	go func() {
		sum, n := 0.0, 0
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			v := srv.Stats().Capacity[bucketName].Writes
			if v == 0 {
				v = base
			}
			sum, n = sum+v, n+1
			select {
			case <-m.stop:
				m.done <- sum / float64(n)
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

func (m *capacityMeter) mean() float64 { close(m.stop); return <-m.done }

// small1 measures one client uploading every small file.
func (c *capacityEnv) small1(ctx context.Context, rtt time.Duration, bucket string, l fakegcs.Limits, client string) capRun {
	r := capRun{rtt: rtt, bucket: bucket, client: client, op: opUpload, files: len(c.files)}
	srv, cert, dir, err := c.capServer(fakegcs.Options{RTT: rtt, CapRate: c.o.CapRate, Limits: l})
	if err != nil {
		r.err = err
		return r
	}
	defer srv.Close()
	meter := meterCapacity(srv, l.WriteRate)
	start := time.Now()
	switch {
	case strings.HasPrefix(client, clientGcsput):
		args := append([]string{"cp", "-r"}, jobsOf(client)...)
		r.err = c.runGcsput(ctx, srv, cert, dir, append(args, c.small, "gs://"+bucketName+"/"+capacityPrefix)...)
	default:
		r.err = c.runGo(ctx, srv, cert, dir, client, opUpload, c.files, c.small, false)
	}
	r.secs = time.Since(start).Seconds()
	r.capacity = meter.mean()
	c.finish(srv, &r)
	fmt.Fprintf(c.log, "capacity: %v %s %s: %d files in %.1fs, %.0f files/s (%.2f× capacity %.0f), %d refused\n",
		rtt, bucket, client, r.files, r.secs, r.filesps(), r.share(), r.capacity, r.refused)
	return r
}

// finish counts the refusals and checks that every file arrived.
func (c *capacityEnv) finish(srv *fakegcs.Server, r *capRun) {
	st := srv.Stats()
	for _, n := range st.Refused {
		r.refused += n
	}
	if r.err != nil || r.op != opUpload || r.files == 0 {
		return
	}
	got := len(srv.InsertCounts(bucketName))
	if got < r.files {
		r.err = fmt.Errorf("%d of %d files arrived", got, r.files)
	}
}

// twoProcesses runs two gcsput processes at their defaults at once, each
// with half the files, on one bucket: a row for both together, one each.
func (c *capacityEnv) twoProcesses(ctx context.Context, rtt time.Duration, l fakegcs.Limits) []capRun {
	together := capRun{rtt: rtt, bucket: "fixed", client: "2 × gcsput", op: opUpload, files: len(c.files)}
	srv, cert, dir, err := c.capServer(fakegcs.Options{RTT: rtt, CapRate: c.o.CapRate, Limits: l})
	if err != nil {
		together.err = err
		return []capRun{together}
	}
	defer srv.Close()
	meter := meterCapacity(srv, l.WriteRate)
	each := make([]capRun, 2)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 2 {
		each[i] = capRun{rtt: rtt, bucket: "fixed", client: fmt.Sprintf("2 × gcsput: process %d", i+1), op: opUpload,
			files: (len(c.files) + 1 - i) / 2}
		wg.Go(func() {
			sub := filepath.Join(dir, fmt.Sprint("p", i))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				each[i].err = err
				return
			}
			t0 := time.Now()
			each[i].err = c.runGcsput(ctx, srv, cert, sub, "cp", "-r", c.halves[i], "gs://"+bucketName+"/"+capacityPrefix)
			each[i].secs = time.Since(t0).Seconds()
		})
	}
	wg.Wait()
	together.secs = time.Since(start).Seconds()
	together.capacity = meter.mean()
	c.finish(srv, &together)
	for i := range each {
		each[i].capacity = together.capacity / 2 // a fair share
		if each[i].err != nil && together.err == nil {
			together.err = each[i].err
		}
	}
	fmt.Fprintf(c.log, "capacity: %v two processes: %.0f files/s together (%.2f× capacity), %d refused\n",
		rtt, together.filesps(), together.share(), together.refused)
	return append([]capRun{together}, each...)
}

// large1 moves the large file one way with one client on the large file's
// link, total limited to total bytes a second (0: none).
func (c *capacityEnv) large1(ctx context.Context, total int64, client, op string) capRun {
	bucket := "link"
	if total > 0 {
		bucket = "link+total"
	}
	r := capRun{rtt: capacityLargeRTT, bucket: bucket, client: client, op: op, bytes: c.large.Size}
	// The download's server holds the object already; the upload's gets it.
	srv, cert, dir, err := c.capServer(fakegcs.Options{RTT: capacityLargeRTT, CapRate: capacityConnRate,
		Limits: fakegcs.Limits{LinkRate: total}, DisableMD5: strings.HasPrefix(client, clientGcsput)})
	if err != nil {
		r.err = err
		return r
	}
	defer srv.Close()
	if op == opDownload {
		data, err := os.ReadFile(c.large.Path)
		if err == nil {
			_, err = srv.PutObject(bucketName, capacityPrefix+c.large.Object, data)
		}
		if err != nil {
			r.err = err
			return r
		}
	}
	out := filepath.Join(dir, "large.out")
	args := append([]string{"cp"}, jobsOf(client)...)
	obj := "gs://" + bucketName + "/" + capacityPrefix + c.large.Object
	start := time.Now()
	switch {
	case strings.HasPrefix(client, clientGcsput) && op == opUpload:
		r.err = c.runGcsput(ctx, srv, cert, dir, append(args, c.large.Path, obj)...)
	case strings.HasPrefix(client, clientGcsput):
		r.err = c.runGcsput(ctx, srv, cert, dir, append(args, obj, out)...)
	default:
		ref := c.large
		if op == opDownload {
			ref.Path = out
		}
		r.err = c.runGo(ctx, srv, cert, dir, client, op, []fileRef{ref}, filepath.Dir(c.large.Path), true)
	}
	r.secs = time.Since(start).Seconds()
	os.Remove(out)
	fmt.Fprintf(c.log, "capacity: large %s %s %s: %.0f MB/s\n", bucket, op, client, r.mbps())
	return r
}

// runGcsput runs the gcsput command against srv over TLS, trusting its
// certificate, in dir.
func (c *capacityEnv) runGcsput(ctx context.Context, srv *fakegcs.Server, cert, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, c.gcsput, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, ".state"),
		"STORAGE_EMULATOR_HOST=" + srv.URL(), "SSL_CERT_FILE=" + cert}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("gcsput %s: %w: %s", strings.Join(args, " "), err, tail(out.String()))
	}
	return nil
}

// runGo runs gcloud storage or the official client the way the other
// scenarios do (prepareGcloud, prepareOfficial): gcsput's default streams
// (upload.DefaultParallelism) for small files;
// for the large file gcloud's parallel modes with gcsput's sizes.
func (c *capacityEnv) runGo(ctx context.Context, srv *fakegcs.Server, cert, dir, client, op string, files []fileRef, srcDir string, large bool) error {
	spec := &childSpec{Client: client, Op: op, GCS: srv.URL(), Bucket: bucketName, Files: files, SrcDir: srcDir,
		DstDir: dir, Prefix: capacityPrefix, Parallel: upload.DefaultParallelism, ChunkSize: c.o.ChunkSize, Capped: large, CAFile: cert,
		ConfigDir: filepath.Join(dir, "config")}
	prepare := prepareOfficial
	if client == clientGcloud {
		prepare = prepareGcloud
	}
	t, err := prepare(ctx, spec)
	if err != nil {
		return err
	}
	if op == opDownload {
		_, err = t.download(ctx)
	} else {
		_, err = t.upload(ctx)
	}
	return err
}
