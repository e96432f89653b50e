//go:build !linux

package resumable

import "io"

// privateFile: sendfile from the descriptor's offset is Linux's; elsewhere
// chunks are read with pread.
func privateFile(io.ReaderAt) *privFile { return nil }
