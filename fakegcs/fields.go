package fakegcs

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// The JSON API's partial responses: "fields=generation,size,crc32c" asks for
// those members of the resource only, which GCS then sends alone
// (partial.go parses and checks the expression). A list of top-level
// Object members, the common case of an upload's answer, is encoded here
// without a round trip through encoding/json.

// writeObject answers with the Object resource of a, cut to the request's
// fields parameter when it names top-level members only.
func (x *exchange) writeObject(a ObjectAttrs) {
	o := rawObject(a, x.baseURL())
	if a.CustomerKeySHA256 != "" {
		if sent, _ := requestKey(x.r.Header, keyHeaders); sent != a.CustomerKeySHA256 {
			hideHashes(o)
		}
	}
	if x.fields != nil {
		if b, ok := partialObject(o, x.fields); ok {
			writeJSONBytes(x.w, http.StatusOK, b)
			return
		}
	}
	x.writeResource(http.StatusOK, o)
}

// objectMembers lists objectResource's JSON members in struct order, read
// once from the struct tags, with the index of each name.
var objectMembers = sync.OnceValues(func() ([]objectMember, map[string]int) {
	t := reflect.TypeFor[objectResource]()
	ms := make([]objectMember, t.NumField())
	index := make(map[string]int, len(ms))
	for i := range ms {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		ms[i] = objectMember{key: strconv.Quote(name) + ":",
			quoted: strings.Contains(opts, "string"), omitEmpty: strings.Contains(opts, "omitempty")}
		index[name] = i
	}
	return ms, index
})

type objectMember struct {
	key               string // `"name":`
	quoted, omitEmpty bool   // the tag's ",string" and ",omitempty"
}

// partialObject encodes the members of o that sel lists, in the struct's
// order as encoding/json would; ok is false for a selection with
// sub-selections or "*", which writeResource handles. Members of the
// resource that fakegcs does not fill are left out, as GCS leaves out
// members an object lacks; empty omitempty members are left out as in the
// full resource.
func partialObject(o *objectResource, sel selection) (b []byte, ok bool) {
	members, index := objectMembers()
	want := make([]bool, len(members))
	for name, sub := range sel {
		if sub != nil || name == "*" {
			return nil, false
		}
		if i, known := index[name]; known {
			want[i] = true
		}
	}
	v := reflect.ValueOf(o).Elem()
	b = make([]byte, 1, 128)
	b[0] = '{'
	for i, m := range members {
		f := v.Field(i)
		if !want[i] || (m.omitEmpty && f.IsZero()) {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, m.key...)
		switch {
		case f.Kind() == reflect.Int64 && m.quoted:
			b = append(strconv.AppendInt(append(b, '"'), f.Int(), 10), '"')
		case f.Kind() == reflect.Uint64 && m.quoted:
			b = append(strconv.AppendUint(append(b, '"'), f.Uint(), 10), '"')
		case f.Kind() == reflect.String && plainJSON(f.String()):
			b = append(append(append(b, '"'), f.String()...), '"')
		default:
			val, err := json.Marshal(f.Interface())
			if err != nil {
				return nil, false
			}
			b = append(b, val...)
		}
	}
	return append(b, '}'), true
}

// plainJSON reports whether s needs no escaping in a JSON string as
// encoding/json writes it (which also escapes <, > and &).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
