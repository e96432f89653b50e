package fakegcs

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// serveObjectList answers GET /storage/v1/b/BUCKET/o with prefix,
// delimiter, includeTrailingDelimiter, startOffset, endOffset, matchGlob,
// maxResults and pageToken. Prefixes count towards maxResults, as in GCS.
// matchGlob filters the object names before the delimiter groups them, so a
// prefix is returned when an object under it matches; with matchGlob the
// delimiter must be absent or "/" (400), as GCS requires.
func (s *Server) serveObjectList(x *exchange) {
	q := x.r.URL.Query()
	maxResults := 1000
	if v := q.Get("maxResults"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			x.fail(errf(400, "invalid", "Invalid maxResults %q", v))
			return
		}
		if n > 0 && n < maxResults {
			maxResults = n
		}
	}
	cur, err := decodePageToken(q.Get("pageToken"))
	if err != nil {
		x.fail(errf(400, "invalid", "Invalid pageToken"))
		return
	}
	glob, apiErr := listGlob(q.Get("matchGlob"), q.Get("delimiter"))
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	l := lister{
		prefix: q.Get("prefix"), delim: q.Get("delimiter"),
		start: q.Get("startOffset"), end: q.Get("endOffset"),
		trailing: q.Get("includeTrailingDelimiter") == "true",
		max:      maxResults, cursor: cur, base: x.baseURL(), glob: glob,
	}
	if glob != nil {
		s.globListed()
	}
	out, apiErr := s.listPage(x.ri.bucket, &l)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	if f := x.fault; f != nil {
		switch f.Kind {
		case KindRepeatPageToken:
			out.NextPageToken = cur.token()
		case KindEmptyPage:
			out = &objectList{Kind: "storage#objects", Items: []*objectResource{}, NextPageToken: s.emptyPageToken(cur)}
		}
	}
	x.writeResource(http.StatusOK, out)
}

// emptyPageToken is a token that lists from c like c's own, but differs
// from every token given before (KindEmptyPage).
func (s *Server) emptyPageToken(c pageCursor) string {
	n := s.emptyPages.Add(1)
	return base64.RawURLEncoding.EncodeToString([]byte("e" + strconv.FormatInt(n, 10) + ":" + c.token()))
}

// listPage lists one page of bucket under s.mu. The page costs a seek and
// then one step per entry it returns (plus those matchGlob rejects): a
// rolled-up prefix is skipped with one seek past it, and the walk stops at
// the end of the prefix's range or at endOffset.
func (s *Server) listPage(bucket string, l *lister) (*objectList, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, errNoBucket
	}
	out, examined := l.page(b.objects)
	s.listExamined.Add(int64(examined))
	return out, nil
}

var errBadPageToken = errors.New("malformed page token")

// pageCursor is where a listing resumes: after an object name, or after
// every name under a prefix that was already returned.
type pageCursor struct {
	after    string
	isPrefix bool
}

func decodePageToken(t string) (pageCursor, error) {
	if t == "" {
		return pageCursor{}, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil || len(b) == 0 {
		return pageCursor{}, errBadPageToken
	}
	if b[0] == 'e' { // an empty page's token: "e<n>:" and the token it stands for
		_, inner, ok := strings.Cut(string(b), ":")
		if !ok {
			return pageCursor{}, errBadPageToken
		}
		return decodePageToken(inner)
	}
	return pageCursor{after: string(b[1:]), isPrefix: b[0] == 'p'}, nil
}

func (c pageCursor) token() string {
	kind := "n"
	if c.isPrefix {
		kind = "p"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(kind + c.after))
}

type lister struct {
	prefix, delim, start, end string
	trailing                  bool
	max                       int
	cursor                    pageCursor
	base                      string
	glob                      *matchGlob // nil: every name
}

// listGlob reads the matchGlob parameter ("" is none).
func listGlob(v, delim string) (*matchGlob, *apiError) {
	if v == "" {
		return nil, nil
	}
	if delim != "" && delim != "/" {
		return nil, errf(400, "invalid", "matchGlob requires the delimiter to be unset or '/', not %q", delim)
	}
	g, err := parseMatchGlob(v)
	if err != nil {
		return nil, errf(400, "invalid", "Invalid matchGlob %q: %v", v, err)
	}
	return g, nil
}

// from is the least name the listing may return: the greatest of prefix,
// startOffset and the cursor's resume point; ok is false when the cursor
// is past every name.
func (l *lister) from() (key string, ok bool) {
	key = max(l.prefix, l.start)
	switch c := l.cursor; {
	case c.isPrefix:
		past, ok := pastPrefix(c.after)
		if !ok {
			return "", false
		}
		key = max(key, past)
	case c.after != "":
		key = max(key, after(c.after))
	}
	return key, true
}

// page walks ix from l.from() and returns the page and the number of names
// it looked at. Prefixes count towards max as items do; an object named as
// its prefix is listed beside it with includeTrailingDelimiter and does not
// count.
func (l *lister) page(ix *objectIndex) (out *objectList, examined int) {
	out = &objectList{Kind: "storage#objects", Items: []*objectResource{}}
	key, ok := l.from()
	if !ok {
		return out, 0
	}
	count := 0
	var last pageCursor // the last item or prefix returned
	for it := ix.seek(key); it.valid(); {
		name := it.name()
		examined++
		if !strings.HasPrefix(name, l.prefix) || (l.end != "" && name >= l.end) {
			break // names are in order: none further is in range
		}
		if l.glob != nil && !l.glob.match(name) {
			it.next()
			continue
		}
		if count == l.max {
			out.NextPageToken = last.token()
			break
		}
		count++
		p := l.commonPrefix(name)
		if p == "" {
			last = pageCursor{after: name}
			out.Items = append(out.Items, listedObject(ix.get(name).attrs, l.base))
			it.next()
			continue
		}
		// name is the first listed under p, so the only one that can be p.
		last = pageCursor{after: p, isPrefix: true}
		out.Prefixes = append(out.Prefixes, p)
		if l.trailing && name == p {
			out.Items = append(out.Items, listedObject(ix.get(name).attrs, l.base))
		}
		past, ok := pastPrefix(p)
		if !ok {
			break
		}
		it = ix.seek(past)
	}
	return out, examined
}

// commonPrefix is the prefix+…+delimiter that groups name, or "".
func (l *lister) commonPrefix(name string) string {
	if l.delim == "" {
		return ""
	}
	rest := name[len(l.prefix):]
	i := strings.Index(rest, l.delim)
	if i < 0 {
		return ""
	}
	return l.prefix + rest[:i+len(l.delim)]
}

// listedObject is a listing's entry for a: a listing carries no key, so a
// CSEK object's hashes are not shown, as GCS does not show them.
func listedObject(a ObjectAttrs, base string) *objectResource {
	o := rawObject(a.clone(), base)
	if a.CustomerKeySHA256 != "" {
		hideHashes(o)
	}
	return o
}
