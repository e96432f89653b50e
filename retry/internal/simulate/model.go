package simulate

import (
	"math/rand/v2"
	"time"

	"github.com/gcsput/gcsput/retry"
)

// One run is one goroutine's work from start to end, so the race detector has nothing to find
// in the model's hot loop, and instrumenting it made `go test -race ./retry` several times
// slower; the //go:norace directives below exclude just these functions. The policies the
// model calls, and everything else in the module, stay instrumented.

// A try is four messages: read request, read reply, write request, write reply. Only the
// two that reach the server touch shared state, so only they are events: when one arrives,
// the model draws the reply's travel time, lets the client react on its arrival (send the
// write, or back off), and queues the client's next message at the server. This is the
// same model as four events per try, with half the queue work.
const (
	readAtServer = iota
	writeAtServer
)

// event is a message arriving at the server; val is the version a write carries.
type event struct {
	at     time.Duration
	seq    uint64 // ties go first-come first-served
	kind   uint8
	client int32
	val    int64
}

// client is one contender's backoff state.
type client struct {
	lost int           // writes lost so far
	prev time.Duration // its policy's previous wait
}

// world is one run: the record's version, the message queue and the counters.
type world struct {
	q       queue
	seq     uint64
	rng     *rand.Rand
	mean    float64
	sd      float64
	version int64
	calls   int
	finish  time.Duration
	clients []client
}

// runOnce plays one run to the end and returns the write calls and the last finish time.
//
//go:norace
func runOnce(cfg Config, p retry.Policy, rng *rand.Rand) (calls int, finish time.Duration) {
	w := &world{rng: rng, mean: float64(cfg.Mean), sd: float64(cfg.SD), clients: make([]client, cfg.Clients)}
	for i := range w.clients {
		w.send(0, readAtServer, int32(i), 0)
	}
	for len(w.q) > 0 {
		w.handle(p, w.q.pop())
	}
	return w.calls, w.finish
}

// handle delivers e at the server and plays the client's side of the reply.
//
//go:norace
func (w *world) handle(p retry.Policy, e event) {
	if e.kind == readAtServer {
		// The reply carries the current version; on its arrival the client sends the write.
		w.send(e.at+w.delay(), writeAtServer, e.client, w.version)
		return
	}
	w.calls++
	won := e.val == w.version
	reply := e.at + w.delay() // when the client learns the outcome
	if won {
		w.version++
		w.finish = max(w.finish, reply)
		return
	}
	c := &w.clients[e.client]
	c.lost++
	// The blog's simulator counts its first backoff as n = 1; retry's Step.N counts from 0,
	// so passing the number of lost writes reproduces the blog's waits exactly.
	d, ok := p.Wait(retry.Step{N: c.lost, Prev: c.prev, Elapsed: reply, Rand: w.rng.Float64()})
	if !ok {
		w.finish = max(w.finish, reply) // the policy gave up: this client is finished too
		return
	}
	c.prev = d
	w.send(reply+d, readAtServer, e.client, 0)
}

// send queues a message that leaves at from and reaches the server one network delay later.
//
//go:norace
func (w *world) send(from time.Duration, kind uint8, c int32, val int64) {
	w.seq++
	w.q.push(event{at: from + w.delay(), seq: w.seq, kind: kind, client: c, val: val})
}

// delay is one message's network time: |Normal(mean, sd)|, as in the blog's model.
//
//go:norace
func (w *world) delay() time.Duration {
	d := w.rng.NormFloat64()*w.sd + w.mean
	if d < 0 {
		d = -d
	}
	return time.Duration(d)
}

// queue is a binary min-heap of events by (at, seq); typed, so the hot loop has no interface
// calls.
type queue []event

func (q queue) less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].seq < q[j].seq
}

//go:norace
func (q *queue) push(e event) {
	*q = append(*q, e)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

//go:norace
func (q *queue) pop() event {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.less(l, m) {
			m = l
		}
		if r < len(h) && h.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}
