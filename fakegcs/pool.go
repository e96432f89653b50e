package fakegcs

import "sync"

// blockPool recycles quantum-sized buffers: the read buffers of every
// upload and, once no object or reader refers to them, the memory
// backend's blocks. Reusing them keeps a long benchmark from touching fresh
// pages (page faults cost more than the copy itself).
var blockPool = sync.Pool{New: func() any { b := make([]byte, quantum); return &b }}

func getBlock() []byte { return *(blockPool.Get().(*[]byte)) }

// putBlock returns a buffer that came from getBlock.
func putBlock(b []byte) {
	if cap(b) != quantum {
		return
	}
	b = b[:quantum]
	blockPool.Put(&b)
}
