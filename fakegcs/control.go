package fakegcs

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"
)

// faultJSON is Fault on the wire: durations as Go duration strings ("2s",
// "150ms"); plain numbers are read as seconds.
type faultJSON struct {
	faultAlias
	RetryAfter jsonDuration `json:"retryAfter,omitempty"`
	Delay      jsonDuration `json:"delay,omitempty"`
}

type faultAlias Fault

type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		*d = jsonDuration(v)
		return err
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return err
	}
	*d = jsonDuration(secs * float64(time.Second))
	return nil
}

// MarshalJSON writes durations as strings such as "2s".
func (f Fault) MarshalJSON() ([]byte, error) {
	return json.Marshal(faultJSON{faultAlias: faultAlias(f), RetryAfter: jsonDuration(f.RetryAfter), Delay: jsonDuration(f.Delay)})
}

// UnmarshalJSON reads durations as strings ("2s") or numbers of seconds.
func (f *Fault) UnmarshalJSON(b []byte) error {
	var j faultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = Fault(j.faultAlias)
	f.RetryAfter, f.Delay = time.Duration(j.RetryAfter), time.Duration(j.Delay)
	return nil
}

// ParseFaultsJSON reads one fault object or an array of them.
func ParseFaultsJSON(b []byte) ([]Fault, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var f Fault
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		return []Fault{f}, nil
	}
	var fs []Fault
	err := json.Unmarshal(b, &fs)
	return fs, err
}

type injectionJSON struct {
	ID    int   `json:"id"`
	Fired int   `json:"fired"`
	Fault Fault `json:"fault"`
}

func injectionsJSON(ins []*Injection) []injectionJSON {
	out := make([]injectionJSON, 0, len(ins))
	for _, in := range ins {
		out = append(out, injectionJSON{ID: in.id, Fired: in.Fired(), Fault: in.fault})
	}
	return out
}

// serveControl is fakegcs's own HTTP API, for a standalone server:
//
//	GET    /_fakegcs/faults       the injected faults and how often each fired
//	POST   /_fakegcs/faults       inject a fault (JSON object) or several (array)
//	DELETE /_fakegcs/faults       remove every fault
//	DELETE /_fakegcs/faults/{id}  remove one fault
//	GET    /_fakegcs/stats        counters (Stats as JSON)
//	GET    /_fakegcs/limits       the request-rate Limits in force
//	PUT    /_fakegcs/limits       replace them (a Limits as JSON; {} for none)
//	GET    /_fakegcs/log          the request log
//	GET    /_fakegcs/healthz      "ok"
func (s *Server) serveControl(x *exchange) {
	p := splitPath(x.r)
	what, m := "", x.r.Method
	if len(p) > 1 {
		what = p[1]
	}
	switch {
	case what == "faults" && len(p) == 2 && m == http.MethodGet:
		writeJSON(x.w, http.StatusOK, injectionsJSON(s.Faults()))
	case what == "faults" && len(p) == 2 && m == http.MethodPost:
		s.controlInject(x)
	case what == "faults" && len(p) == 2 && m == http.MethodDelete:
		s.ClearFaults()
		x.w.WriteHeader(http.StatusNoContent)
	case what == "faults" && len(p) == 3 && m == http.MethodDelete:
		s.controlRemove(x, p[2])
	case what == "stats" && m == http.MethodGet:
		writeJSON(x.w, http.StatusOK, s.Stats())
	case what == "limits" && m == http.MethodGet:
		writeJSON(x.w, http.StatusOK, s.Limits())
	case what == "limits" && (m == http.MethodPut || m == http.MethodPost):
		s.controlLimits(x)
	case what == "log" && m == http.MethodGet:
		writeJSON(x.w, http.StatusOK, s.Log())
	case what == "healthz":
		x.w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(x.w, "ok\n")
	default:
		x.fail(errf(404, "notFound", "unknown fakegcs control request"))
	}
}

func (s *Server) controlInject(x *exchange) {
	b, err := io.ReadAll(io.LimitReader(x.r.Body, 1<<20))
	if err != nil {
		x.fail(errf(400, "invalid", "%v", err))
		return
	}
	fs, err := ParseFaultsJSON(b)
	if err != nil {
		x.fail(errf(400, "parseError", "Parse Error: %v", err))
		return
	}
	var ins []*Injection
	for _, f := range fs {
		in, err := s.TryInject(f)
		if err != nil {
			x.fail(errf(400, "invalid", "%v", err))
			return
		}
		ins = append(ins, in)
	}
	writeJSON(x.w, http.StatusOK, injectionsJSON(ins))
}

func (s *Server) controlRemove(x *exchange, id string) {
	n, _ := strconv.Atoi(id)
	for _, in := range s.Faults() {
		if in.id == n {
			in.Remove()
			x.w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	x.fail(errf(404, "notFound", "no fault %q", id))
}

func (s *Server) controlLimits(x *exchange) {
	var l Limits
	if err := json.NewDecoder(io.LimitReader(x.r.Body, 1<<20)).Decode(&l); err != nil {
		x.fail(errf(400, "parseError", "Parse Error: %v", err))
		return
	}
	if err := s.SetLimits(l); err != nil {
		x.fail(errf(400, "invalid", "%v", err))
		return
	}
	writeJSON(x.w, http.StatusOK, s.Limits())
}
