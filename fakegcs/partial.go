package fakegcs

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// Partial responses ("fields"), as the JSON API reads them:
//
//	fields    = selector *( "," selector )
//	selector  = path [ "(" fields ")" ]
//	path      = name *( "/" name )
//	name      = 1*( any character but , / ( ) * ) / "*"
//
// "items(name,size),nextPageToken" keeps those members of every item and
// the token; "items/name" is "items(name)"; "*" is every member at its
// level. A name may hold "-" and ".": gcloud storage rsync selects
// items/metadata/goog-reserved-file-mtime. A name the resource does not define, a sub-selection of a plain
// value, or a malformed expression is GCS's 400 "Invalid field selection",
// sent before the request does anything. A defined member that the answer
// lacks is left out, as GCS leaves it out.

// selection is a parsed fields expression: the members kept, each with
// the selection applied to it (nil: the whole member).
type selection map[string]selection

// fieldSchema is what a fields expression may name in a resource: its
// members, each with its own schema (nil: a plain value, which takes no
// sub-selection); open accepts any member name (metadata's keys, and the
// inner members of resources fakegcs does not model in detail).
type fieldSchema struct {
	members map[string]*fieldSchema
	open    bool
}

var openSchema = &fieldSchema{open: true}

// objectSchema is the Object resource's members as GCS documents them,
// whether or not fakegcs fills them.
var objectSchema = func() *fieldSchema {
	s := &fieldSchema{members: map[string]*fieldSchema{}}
	for _, m := range strings.Fields(`kind id selfLink mediaLink name bucket generation metageneration
		contentType storageClass size softDeleteTime hardDeleteTime md5Hash contentEncoding
		contentDisposition contentLanguage cacheControl crc32c componentCount etag kmsKeyName
		temporaryHold eventBasedHold retentionExpirationTime timeCreated updated timeDeleted
		timeStorageClassUpdated customTime timeFinalized restoreToken`) {
		s.members[m] = nil
	}
	for _, m := range []string{"metadata", "acl", "owner", "customerEncryption", "retention", "contexts"} {
		s.members[m] = openSchema
	}
	return s
}()

// listSchema is the Objects resource (a listing page).
var listSchema = &fieldSchema{members: map[string]*fieldSchema{
	"kind": nil, "nextPageToken": nil, "prefixes": nil, "items": objectSchema}}

// rewriteSchema is the RewriteResponse resource.
var rewriteSchema = &fieldSchema{members: map[string]*fieldSchema{
	"kind": nil, "done": nil, "objectSize": nil, "totalBytesRewritten": nil,
	"rewriteToken": nil, "resource": objectSchema}}

// responseSchema is the schema of op's answer, nil for an op whose fields
// parameter fakegcs does not check.
func responseSchema(op string) *fieldSchema {
	switch op {
	case "storage.objects.list":
		return listSchema
	case "storage.objects.rewrite":
		return rewriteSchema
	case "storage.objects.get", "storage.objects.insert", "storage.objects.patch",
		"storage.objects.update", "storage.objects.compose", "storage.objects.copy":
		return objectSchema
	}
	return nil
}

// checkFields parses the request's fields parameter against its op's
// schema and keeps it on x; an invalid one is GCS's 400.
func (x *exchange) checkFields() *apiError {
	v := x.r.URL.Query().Get("fields")
	schema := responseSchema(x.ri.op)
	if v == "" || schema == nil {
		return nil
	}
	sel, bad := parseFields(v)
	if bad == "" {
		bad = schema.check(sel, "")
	}
	if bad != "" {
		return errf(400, "invalidParameter", "Invalid field selection %s", bad)
	}
	x.fields = sel
	return nil
}

// parseFields parses a fields expression; bad is the offending part, ""
// when it parses.
func parseFields(v string) (sel selection, bad string) {
	p := fieldsParser{s: v}
	sel = selection{}
	if !p.list(sel, 0) || p.i != len(p.s) {
		return nil, p.bad()
	}
	return sel, ""
}

type fieldsParser struct {
	s string
	i int
}

// maxFieldsDepth bounds the nesting of parentheses.
const maxFieldsDepth = 16

func (p *fieldsParser) bad() string {
	if p.i >= len(p.s) {
		return p.s
	}
	return p.s[p.i:]
}

// list parses selectors separated by commas into into, up to a ")" or the
// end.
func (p *fieldsParser) list(into selection, depth int) bool {
	if depth > maxFieldsDepth {
		return false
	}
	for {
		if !p.selector(into, depth) {
			return false
		}
		if p.i == len(p.s) || p.s[p.i] != ',' {
			return true
		}
		p.i++
	}
}

// selector parses one path with its optional sub-selection into into.
func (p *fieldsParser) selector(into selection, depth int) bool {
	var path []string
	for {
		name := p.name()
		if name == "" {
			return false
		}
		path = append(path, name)
		if p.i == len(p.s) || p.s[p.i] != '/' {
			break
		}
		p.i++
	}
	var sub selection // nil: the whole member
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		sub = selection{}
		if !p.list(sub, depth+1) || p.i == len(p.s) || p.s[p.i] != ')' {
			return false
		}
		p.i++
	}
	for i := len(path) - 1; i > 0; i-- {
		sub = selection{path[i]: sub}
	}
	into.merge(path[0], sub)
	return true
}

func (p *fieldsParser) name() string {
	if p.i < len(p.s) && p.s[p.i] == '*' {
		p.i++
		return "*"
	}
	j := p.i
	for j < len(p.s) && !strings.ContainsRune(",/()*", rune(p.s[j])) {
		j++
	}
	name := p.s[p.i:j]
	p.i = j
	return name
}

// merge adds member name with sub to s: the whole member wins over a part
// of it, and two parts combine.
func (s selection) merge(name string, sub selection) {
	old, ok := s[name]
	switch {
	case !ok:
		s[name] = sub
	case old == nil || sub == nil:
		s[name] = nil
	default:
		for k, v := range sub {
			old.merge(k, v)
		}
	}
}

// check returns the first selector of sel that schema does not define
// (with its path), or "".
func (sc *fieldSchema) check(sel selection, path string) string {
	for name, sub := range sel {
		full := path + name
		member, known := sc.members[name]
		switch {
		case name == "*":
			if sub == nil {
				continue
			}
			// "*(x)": x applies to every member; accept it if some
			// member takes it, as for an open schema.
			if sc.open {
				continue
			}
			ok := false
			for _, m := range sc.members {
				if m != nil && m.check(sub, "") == "" {
					ok = true
				}
			}
			if !ok {
				return full
			}
		case sc.open:
		case !known:
			return full
		case sub == nil:
		case member == nil:
			return full // a plain value has no members to select
		default:
			if bad := member.check(sub, full+"/"); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// writeResource answers with v encoded as JSON, cut to the request's
// fields.
func (x *exchange) writeResource(code int, v any) {
	b, err := json.Marshal(v)
	if err == nil && x.fields != nil {
		b, err = filterJSON(b, x.fields)
	}
	if err != nil { // unreachable: fakegcs encoded b itself
		x.fail(errf(http.StatusInternalServerError, "internalError", "fakegcs: cannot encode the response: %v", err))
		return
	}
	writeJSONBytes(x.w, code, b)
}

// filterJSON keeps the members of the JSON object (or array of objects) b
// that sel selects, in their order.
func filterJSON(b []byte, sel selection) ([]byte, error) {
	b = bytes.TrimSpace(b)
	if sel == nil || len(b) == 0 {
		return b, nil
	}
	switch b[0] {
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(b, &elems); err != nil {
			return nil, err
		}
		out := []byte{'['}
		for i, e := range elems {
			f, err := filterJSON(e, sel)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, f...)
		}
		return append(out, ']'), nil
	case '{':
		return filterObject(b, sel)
	}
	return b, nil // a plain value: nothing to select in it
}

// filterObject is filterJSON for one JSON object.
func filterObject(b []byte, sel selection) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	star, all := sel["*"]
	out := []byte{'{'}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		sub, ok := sel[key]
		if !ok {
			if !all {
				continue
			}
			sub = star
		}
		if val, err = filterJSON(val, sub); err != nil {
			return nil, err
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		k, _ := json.Marshal(key)
		out = append(append(append(out, k...), ':'), val...)
	}
	return append(out, '}'), nil
}
