package fill

import "testing"

// TestComponentLeastWholeRounds: over sizes and stream counts, the
// components number 1 to 32, none but the last below MinPart unless the
// file is smaller than a stream's MinPart, and when every stream has more
// than MostComponent to move (and 32 allows it) they come in whole rounds
// of the streams, none above MostComponent unless another round would pass
// 32.
func TestComponentLeastWholeRounds(t *testing.T) {
	const most = 32
	for _, size := range []int64{1, MinPart - 1, MinPart, 3*MinPart + 5, 100 << 20, 256 << 20, 1 << 30, 10 << 30, 1 << 40} {
		for streams := 1; streams <= 48; streams++ {
			per, n := ComponentSize(size, ComponentLeast(size, streams, most), most)
			if n < 1 || n > most {
				t.Fatalf("%d bytes on %d streams: %d components", size, streams, n)
			}
			if n > 1 && per < MinPart {
				t.Errorf("%d bytes on %d streams: components of %d bytes, below MinPart", size, streams, per)
			}
			perStream := (size + int64(streams) - 1) / int64(streams)
			if streams <= most && perStream > MostComponent && n%int64(streams) != 0 {
				t.Errorf("%d bytes on %d streams: %d components, not whole rounds", size, streams, n)
			}
			if per > MostComponent && int64(streams) <= most && n+int64(streams) <= most && n%int64(streams) == 0 {
				t.Errorf("%d bytes on %d streams: %d components of %d bytes, where another round fits", size, streams, n, per)
			}
		}
	}
}
