// Package fill plans the parts of one large transfer for a number of
// streams (issue 31.3): how large the components of a composite upload
// are. Package upload uses it for its plans, and gcsbench to give gcloud
// the same components as gcsput, so that the two are compared on one plan.
package fill

// MinPart is the least size of a part whose size follows the streams:
// below it a part's fixed costs (a session or a ranged GET, its last
// round trip, a record written) take more of its stream's time than
// another stream gives back (docs/performance.md, "Filling the link").
const MinPart = 8 << 20

// MostComponent is the size of the components once every stream has one:
// a larger file is cut into more rounds of components near this size.
const MostComponent = 32 << 20

// ComponentLeast is the least size of the components of size bytes moved
// on streams streams, at most most components (compose's limit). The
// components come in whole rounds of the streams: one round, each stream
// a component of at least MinPart, while that keeps them within
// MostComponent; beyond it, as many rounds as keep them near that size,
// within most. A round left part-filled is a stream idle for a whole
// component.
func ComponentLeast(size int64, streams int, most int64) int64 {
	n := int64(max(streams, 1))
	per := max(MinPart, (size+n-1)/n)
	if per <= MostComponent {
		return per
	}
	rounds := min((per+MostComponent-1)/MostComponent, max(most/n, 1))
	return (size + n*rounds - 1) / (n * rounds)
}

// ComponentSize is the size per of the components of size bytes whose
// components have at least least bytes, and their number n: at most most,
// each of per bytes but the last.
func ComponentSize(size, least, most int64) (per, n int64) {
	per = max(least, (size+most-1)/most, 1)
	return per, (size + per - 1) / per
}
