package fakegcs

import (
	"net/http"
	"net/url"
	"strconv"
)

// conds are request preconditions. nil fields are absent.
type conds struct {
	genMatch, genNotMatch   *int64
	metaMatch, metaNotMatch *int64
}

// parseConds reads ifGenerationMatch & co. from the query (JSON API) and
// x-goog-if-generation-match & co. from headers (XML API). prefix selects
// the source-object variants ("ifSource") of copy and rewrite.
func parseConds(q url.Values, h http.Header, prefix string) (conds, *apiError) {
	var c conds
	fields := []struct {
		param, header string
		dst           **int64
	}{
		{"GenerationMatch", "x-goog-if-generation-match", &c.genMatch},
		{"GenerationNotMatch", "", &c.genNotMatch},
		{"MetagenerationMatch", "x-goog-if-metageneration-match", &c.metaMatch},
		{"MetagenerationNotMatch", "", &c.metaNotMatch},
	}
	for _, f := range fields {
		v := q.Get(prefix + f.param)
		if v == "" && prefix == "if" && f.header != "" && h != nil {
			v = h.Get(f.header)
		}
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return c, errf(400, "invalid", "Invalid argument for %s%s: %q", prefix, f.param, v)
		}
		*f.dst = &n
	}
	return c, nil
}

// check tests the preconditions against the live object (nil when there is
// none). A read (isRead) reports failed "not match" conditions as 304, as
// GCS does; everything else fails with 412.
func (c conds) check(o *object, isRead bool) *apiError {
	if o == nil {
		return c.checkAttrs(nil, isRead)
	}
	return c.checkAttrs(&o.attrs, isRead)
}

// checkAttrs is check against the attributes of the live generation (nil
// when there is none), as an [objectRef] holds them.
func (c conds) checkAttrs(a *ObjectAttrs, isRead bool) *apiError {
	if a == nil {
		if (c.genMatch != nil && *c.genMatch != 0) || c.metaMatch != nil {
			return errPrecondition
		}
		return nil
	}
	if c.genMatch != nil && *c.genMatch != a.Generation {
		return errPrecondition
	}
	if c.metaMatch != nil && *c.metaMatch != a.Metageneration {
		return errPrecondition
	}
	if (c.genNotMatch != nil && *c.genNotMatch == a.Generation) ||
		(c.metaNotMatch != nil && *c.metaNotMatch == a.Metageneration) {
		if isRead {
			return errNotModified
		}
		return errPrecondition
	}
	return nil
}

// checkBucket tests the metageneration preconditions against a bucket.
func (c conds) checkBucket(b *bucket) *apiError {
	if c.metaMatch != nil && *c.metaMatch != b.metageneration ||
		c.metaNotMatch != nil && *c.metaNotMatch == b.metageneration {
		return errPrecondition
	}
	return nil
}

var errNotModified = &apiError{code: http.StatusNotModified, reason: "notModified", msg: "Not Modified"}
