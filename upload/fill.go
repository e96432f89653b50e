package upload

import (
	"github.com/gcsput/gcsput/internal/fill"
	"github.com/gcsput/gcsput/internal/state"
)

// Filling the link (issue 31.3). GCS serves each connection at a limited
// rate, so one large transfer goes faster on more streams, up to the
// Parallelism ceiling. A transfer cut into fixed-size parts cannot use more
// streams than it has parts: 256 MiB in components of at least 32 MiB and 8
// slices used 8 streams whatever -j said. By default (ComponentSize and
// MaxSlices 0) the parts' number follows the streams instead: every stream
// of the ceiling gets a part (components in whole rounds of the streams),
// as long as each part is at least MinPartSize,
// below which a part's fixed costs (a session or a ranged GET started, its
// last round trip, a record saved) take more of its time than another
// stream gives back. MinPartSize was settled on the wire model
// (docs/performance.md, "Filling the link"): on a link of 60 ms and 20 MB/s
// per connection, 8 MiB parts still paid at -j 32.

// MinPartSize is the least size of a slice or a component when their
// number follows the streams (MaxSlices and ComponentSize 0): 8 MiB.
const MinPartSize = fill.MinPart

// maxAutoSlices bounds the slices of one download when their number
// follows the streams, and the slices a saved plan may list then: a record
// is untrusted, and each slice is a request.
const maxAutoSlices = 64

// componentLeast is the least size of the components of a composite upload
// of size bytes: Options.ComponentSize when set; by default components in
// whole rounds of the streams of the ceiling (fill.ComponentLeast). A round
// left part-filled is a stream idle for a whole component: 256 MiB at -j 5
// was 8 components of 32 MiB, two rounds with 3 streams in the second
// (70 MB/s on the wire model, against 90 for a download's 5 slices); it is
// 10 of 25.6 MiB now.
func (c *Client) componentLeast(size int64) int64 {
	if c.opts.ComponentSize > 0 {
		return c.opts.ComponentSize
	}
	return fill.ComponentLeast(size, c.opts.Parallelism, state.MaxComponents)
}

// sliceCount is the number of slices of a download of size bytes:
// Options.MaxSlices when set; by default one a stream of the ceiling, each
// of at least MinPartSize, at most maxAutoSlices.
func (c *Client) sliceCount(size int64) int {
	if c.opts.MaxSlices > 0 {
		return c.opts.MaxSlices
	}
	return int(max(1, min(int64(c.opts.Parallelism), size/MinPartSize, maxAutoSlices)))
}

// mostSlices is the most slices a saved plan may list: MaxSlices when set,
// else maxAutoSlices (a plan saved at a higher -j continues at a lower one,
// on the streams it has).
func (c *Client) mostSlices() int {
	if c.opts.MaxSlices > 0 {
		return c.opts.MaxSlices
	}
	return maxAutoSlices
}

// partChunk is the chunk size of a component of size bytes on a session
// whose chunk size is chunk: with Options.ChunkSize at its default, the
// whole component (rounded up to GCS's 256 KiB), so it goes up in one
// request. A component is read from the file, with no chunk buffer, so a
// larger chunk costs no memory; each chunk past the first costs its stream
// a round trip waiting for the 308 (measured on the wire model: 60 ms of
// each 32 MiB component's 1.8 s at 60 ms and 20 MB/s). A retry after a
// failure still continues from the server's offset. An explicit ChunkSize
// keeps its meaning.
func (c *Client) partChunk(chunk int, size int64) int {
	if !c.wholeParts {
		return chunk
	}
	const quantum = 256 << 10
	return max(chunk, int((size+quantum-1)/quantum*quantum))
}
