package fakegcs

import "sync"

// blockPool recycles the quantum-sized read buffers of backends that do not
// keep them (dir, discard), so many small uploads allocate nothing.
var blockPool = sync.Pool{New: func() any { b := make([]byte, quantum); return &b }}

func getBlock() []byte  { return *(blockPool.Get().(*[]byte)) }
func putBlock(b []byte) { b = b[:quantum]; blockPool.Put(&b) }
