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
// those members of the resource only, which GCS then sends alone. fakegcs
// honours a list of top-level Object members; a selector with sub-fields
// ("owner(entity)", "items/name") gets the whole resource, which a client
// must accept anyway (GCS adds members it does not know of).

// writeObject answers with the Object resource of a, cut to the request's
// fields parameter when it names top-level members only.
func (x *exchange) writeObject(a ObjectAttrs) {
	writeObjectResource(x.w, x.r, rawObject(a, x.baseURL()))
}

func writeObjectResource(w http.ResponseWriter, r *http.Request, o *objectResource) {
	if fields := r.URL.Query().Get("fields"); fields != "" {
		if b, ok := partialObject(o, fields); ok {
			h := w.Header()
			h.Set("Content-Type", "application/json; charset=UTF-8")
			h.Set("Content-Length", strconv.Itoa(len(b)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(b)
			return
		}
	}
	writeJSON(w, http.StatusOK, o)
}

// objectMembers maps each JSON member name of objectResource to its field,
// read once from the struct tags.
var objectMembers = sync.OnceValue(func() map[string]objectMember {
	m := map[string]objectMember{}
	t := reflect.TypeFor[objectResource]()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = objectMember{index: i, quoted: strings.Contains(opts, "string"), omitEmpty: strings.Contains(opts, "omitempty")}
	}
	return m
})

type objectMember struct {
	index             int
	quoted, omitEmpty bool // the tag's ",string" and ",omitempty"
}

// partialObject encodes the members of o that fields lists, in the struct's
// order as encoding/json would; ok is false for a selector it does not
// handle. Unknown names are left out, as GCS leaves out members it does not
// have; empty omitempty members are left out as in the full resource.
func partialObject(o *objectResource, fields string) (b []byte, ok bool) {
	if strings.ContainsAny(fields, "()/*") {
		return nil, false
	}
	members := objectMembers()
	want := make([]bool, len(members))
	for name := range strings.SplitSeq(fields, ",") {
		if m, known := members[strings.TrimSpace(name)]; known {
			want[m.index] = true
		}
	}
	v := reflect.ValueOf(o).Elem()
	t := v.Type()
	b = append(b, '{')
	for i, on := range want {
		f := v.Field(i)
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m := members[name]
		if !on || (m.omitEmpty && f.IsZero()) {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, name)
		b = append(b, ':')
		val, err := json.Marshal(f.Interface())
		if err != nil {
			return nil, false
		}
		if m.quoted {
			b = strconv.AppendQuote(b, string(val))
		} else {
			b = append(b, val...)
		}
	}
	return append(b, '}'), true
}
