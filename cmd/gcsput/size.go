package main

import (
	cliflags "github.com/gcsput/gcsput/internal/cli/flags"
	"github.com/gcsput/gcsput/internal/human"
)

// Sizes are read and written by package human (parsing, gsutil's -h units, the 256 KiB
// chunk rule); these names are the command's short hand for them.
var (
	parseSize      = human.ParseSize
	formatSize     = human.Size // "16.0 MiB", "512 B", as the demo prints too
	gsutilSize     = human.GsutilSize
	checkChunkSize = human.CheckChunkSize
	checkPositive  = human.CheckPositive
)

// chunkAlign is GCS's 256 KiB rule for resumable chunks.
const chunkAlign = human.ChunkAlign

// Size defines a byte-count option.
func (f *flagSet) Size(p *int64, check func(int64) error, long, short, arg, usage string) {
	f.add(cliflags.Size{N: p, Check: check}, long, short, arg, usage)
}
