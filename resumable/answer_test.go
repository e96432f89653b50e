package resumable

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A JSON answer past the bound is an error that names the bound, not a cut body read as
// broken JSON; one at the bound is decoded.
func TestDecodeJSONBound(t *testing.T) {
	answer := func(n int) *http.Response {
		body := `{"name":"x","kind":"storage#object"` + strings.Repeat(" ", n-len(`{"name":"x","kind":"storage#object"}`)) + "}"
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(body))}
	}
	var obj struct{ Name string }
	if err := decodeJSON(answer(maxJSONAnswer), &obj); err != nil || obj.Name != "x" {
		t.Errorf("an answer of 1 MiB: %q, %v", obj.Name, err)
	}
	err := decodeJSON(answer(maxJSONAnswer+1), &obj)
	want := "the 200 response's JSON body is longer than 1 MiB, the most read of one answer"
	if !errors.Is(err, errProtocol) || err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("an answer of 1 MiB + 1 byte: %v, want %q", err, want)
	}
}
