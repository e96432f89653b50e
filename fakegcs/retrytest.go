package fakegcs

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// retryTest is a storage-testbench "Retry Test" resource: per operation, a
// list of failure instructions consumed one per request that carries its id
// in the x-retry-test-id header.
type retryTest struct {
	ID           string              `json:"id"`
	Instructions map[string][]string `json:"instructions"`
	Completed    bool                `json:"completed"`
	Transport    string              `json:"transport"`
}

var (
	reReturn      = regexp.MustCompile(`^return-(\d{3})$`)
	reReturnAfter = regexp.MustCompile(`^return-(\d{3})-after-(\d+)K$`)
	reBrokenAfter = regexp.MustCompile(`^return-broken-stream-after-(\d+)K$`)
	reBrokenFinal = regexp.MustCompile(`^return-broken-stream-final-chunk-after-(\d+)B$`)
	reStall       = regexp.MustCompile(`^stall-for-(\d+)s-after-(\d+)K$`)
)

// instructionFault translates a testbench instruction for a request into a
// fault. ok is false for an instruction fakegcs does not know; applies is
// false when the instruction waits for another kind of request (a mid-body
// failure waits for a request with a body, a final-chunk one for the final
// chunk).
func instructionFault(instr string, ri *reqInfo) (f Fault, ok, applies bool) {
	isRead := ri.op == "storage.objects.get"
	hasBody := ri.phase == "" || ri.hasOffset
	num := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	switch m := []string(nil); {
	case instr == "return-reset-connection":
		return Fault{Kind: KindReset}, true, true
	case instr == "return-broken-stream":
		if isRead {
			return Fault{Kind: KindTruncate}, true, true
		}
		return Fault{Kind: KindReset, AfterBytes: 1}, true, hasBody && ri.op == "storage.objects.insert"
	case reReturn.MatchString(instr):
		m = reReturn.FindStringSubmatch(instr)
		return Fault{Kind: KindStatus, Status: int(num(m[1]))}, true, true
	case reReturnAfter.MatchString(instr):
		m = reReturnAfter.FindStringSubmatch(instr)
		return Fault{Kind: KindStatus, Status: int(num(m[1])), AfterBytes: num(m[2]) << 10}, true, hasBody && !isRead
	case reBrokenAfter.MatchString(instr):
		m = reBrokenAfter.FindStringSubmatch(instr)
		if isRead {
			return Fault{Kind: KindTruncate, AfterBytes: num(m[1]) << 10}, true, true
		}
		return Fault{Kind: KindReset, AfterBytes: num(m[1]) << 10}, true, hasBody
	case reBrokenFinal.MatchString(instr):
		m = reBrokenFinal.FindStringSubmatch(instr)
		return Fault{Kind: KindReset, AfterBytes: max(num(m[1]), 1)}, true, ri.phase == PhaseFinal && ri.hasOffset
	case reStall.MatchString(instr):
		m = reStall.FindStringSubmatch(instr)
		return Fault{Kind: KindStall, Delay: time.Duration(num(m[1])) * time.Second, AfterBytes: max(num(m[2])<<10, 1)}, true, isRead || hasBody
	}
	return Fault{}, false, false
}

// retryTestFault consumes the next instruction of the request's retry test
// for its operation, if any.
func (s *Server) retryTestFault(r *http.Request, ri *reqInfo) *Fault {
	id := r.Header.Get("x-retry-test-id")
	if id == "" {
		return nil
	}
	s.fmu.Lock()
	defer s.fmu.Unlock()
	rt := s.retryTests[id]
	if rt == nil || len(rt.Instructions[ri.op]) == 0 {
		return nil
	}
	list := rt.Instructions[ri.op]
	f, ok, applies := instructionFault(list[0], ri)
	if ok && !applies {
		return nil
	}
	rt.Instructions[ri.op] = list[1:]
	rt.Completed = true
	for _, l := range rt.Instructions {
		if len(l) > 0 {
			rt.Completed = false
		}
	}
	if !ok {
		s.logf("fakegcs: unknown retry-test instruction %q ignored", list[0])
		return nil
	}
	return &f
}

// serveRetryTestAPI implements POST /retry_test, GET /retry_tests,
// GET /retry_test/{id} and DELETE /retry_test/{id}.
func (s *Server) serveRetryTestAPI(x *exchange) {
	p := splitPath(x.r)
	switch {
	case len(p) == 1 && p[0] == "retry_test" && x.r.Method == http.MethodPost:
		s.createRetryTest(x)
	case len(p) == 1 && p[0] == "retry_tests" && x.r.Method == http.MethodGet:
		s.fmu.Lock()
		list := make([]retryTest, 0, len(s.retryTests))
		for _, rt := range s.retryTests {
			list = append(list, cloneRetryTest(rt))
		}
		s.fmu.Unlock()
		writeJSON(x.w, http.StatusOK, map[string]any{"retry_test": list})
	case len(p) == 2 && p[0] == "retry_test":
		s.fmu.Lock()
		rt, ok := s.retryTests[p[1]]
		var out retryTest
		if ok {
			out = cloneRetryTest(rt)
			if x.r.Method == http.MethodDelete {
				delete(s.retryTests, p[1])
			}
		}
		s.fmu.Unlock()
		if !ok {
			x.fail(errf(404, "notFound", "Retry Test %s not found", p[1]))
			return
		}
		writeJSON(x.w, http.StatusOK, out)
	default:
		x.fail(errf(400, "invalid", "unknown retry test request"))
	}
}

func cloneRetryTest(rt *retryTest) retryTest {
	out := *rt
	out.Instructions = map[string][]string{}
	for k, v := range rt.Instructions {
		out.Instructions[k] = append([]string{}, v...)
	}
	return out
}

func (s *Server) createRetryTest(x *exchange) {
	var req retryTest
	if err := json.NewDecoder(x.r.Body).Decode(&req); err != nil {
		x.fail(errf(400, "parseError", "Parse Error: %v", err))
		return
	}
	if req.Transport == "" {
		req.Transport = "HTTP"
	}
	if !strings.EqualFold(req.Transport, "HTTP") {
		// 501, like an unserved operation: a runner skips the case.
		x.fail(errf(http.StatusNotImplemented, "notImplemented", "fakegcs serves only the HTTP transport, not %s", req.Transport))
		return
	}
	for op, list := range req.Instructions {
		if !servedOps[op] {
			// A runner told "not implemented" skips the case; accepting it would
			// leave the client retrying a 501 forever.
			x.fail(errf(http.StatusNotImplemented, "notImplemented", "fakegcs does not serve %s, so a retry test of it cannot run", op))
			return
		}
		for _, instr := range list {
			if _, ok, _ := instructionFault(instr, &reqInfo{op: op}); !ok {
				x.fail(errf(400, "invalid", "unsupported instruction %q", instr))
				return
			}
		}
	}
	s.fmu.Lock()
	s.lastRetryID++
	req.ID = fmt.Sprintf("%032x", s.lastRetryID)
	if req.Instructions == nil {
		req.Instructions = map[string][]string{}
	}
	s.retryTests[req.ID] = &req
	out := cloneRetryTest(&req)
	s.fmu.Unlock()
	writeJSON(x.w, http.StatusOK, out)
}
