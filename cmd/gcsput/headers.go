package main

import (
	"sort"
	"strings"
)

// objectHeaders are the object attributes a user sets with -h, --metadata and
// --content-type. Empty fields are left to the library's defaults (content type from the
// file extension).
type objectHeaders struct {
	ContentType        string
	CacheControl       string
	ContentDisposition string
	ContentEncoding    string
	ContentLanguage    string
	Metadata           map[string]string // custom metadata (x-goog-meta-*)
}

// parseHeaders reads gsutil-style -h 'Name: value' headers, --metadata key=value pairs and
// --content-type into objectHeaders. Unknown headers are usage errors: silently dropping
// a header the user asked for would be worse.
func parseHeaders(headers, metadata []string, contentType string) (objectHeaders, error) {
	var h objectHeaders
	set := func(k, v string) {
		if h.Metadata == nil {
			h.Metadata = map[string]string{}
		}
		h.Metadata[k] = v
	}
	for _, raw := range headers {
		name, value, ok := strings.Cut(raw, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return h, usagef("-h %q: want 'Name: value', e.g. -h 'Cache-Control: no-cache'", raw)
		}
		lower := strings.ToLower(name)
		switch {
		case lower == "content-type":
			h.ContentType = value
		case lower == "cache-control":
			h.CacheControl = value
		case lower == "content-disposition":
			h.ContentDisposition = value
		case lower == "content-encoding":
			h.ContentEncoding = value
		case lower == "content-language":
			h.ContentLanguage = value
		case strings.HasPrefix(lower, "x-goog-meta-") && len(lower) > len("x-goog-meta-"):
			set(name[len("x-goog-meta-"):], value)
		default:
			return h, usagef("-h %q: unsupported header; use Content-Type, Cache-Control, Content-Disposition, Content-Encoding, Content-Language or x-goog-meta-KEY", raw)
		}
	}
	for _, kv := range metadata {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return h, usagef("--metadata %q: want KEY=VALUE, e.g. --metadata owner=ops", kv)
		}
		set(strings.TrimSpace(k), v)
	}
	if contentType != "" {
		if h.ContentType != "" && h.ContentType != contentType {
			return h, usagef("--content-type %q and -h 'Content-Type: %s' disagree: give one", contentType, h.ContentType)
		}
		h.ContentType = contentType
	}
	return h, nil
}

// sortedKeys returns m's keys in order, for stable output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
