package sep

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecode feeds interceptor server answers (untrusted input) to
// DecodeList and DecodeResult: they never panic, fail only with
// ErrMalformed, and what they accept is consistent (a descriptor has a
// name, a type and request/response hooks only; a result's Blocks implies
// a validation that is not valid).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"interceptors":[{"name":"conf/allow-all","type":"validation","hooks":[{"events":["tools/call"],"phase":"request"},{"events":["tools/call"],"phase":"response"}]}]}`,
		`{"interceptors":[{"name":"p","type":"mutation","hook":{"events":["*"],"phase":"both"},"priorityHint":{"request":-1000,"response":1000},"mode":"audit","failOpen":true}]}`,
		`{"interceptors":[{"name":"p","type":"mutation","hooks":[],"priorityHint":2147483648}]}`,
		`{"interceptor":"conf/deny-all","type":"validation","phase":"request","valid":false,"severity":"error","messages":[{"message":"denied by policy","severity":"error"}]}`,
		`{"interceptor":"u","type":"mutation","phase":"request","modified":true,"payload":{"name":"echo","arguments":{"note":"HELLO"}}}`,
		`{"validation":{"valid":false,"severity":"warn","messages":[{"message":"m"}]}}`,
		`{"mutation":{"modified":true},"payload":null}`,
		`[]`, `null`, `{"interceptors":null}`, `{"valid":"yes"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := DecodeList(b)
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("DecodeList: unclassified error %v", err)
		}
		for _, d := range ds {
			if d.Name == "" || d.Type == "" {
				t.Fatalf("accepted %+v", d)
			}
			for _, h := range d.Hooks {
				if h.Phase != PhaseRequest && h.Phase != PhaseResponse {
					t.Fatalf("hook phase %q", h.Phase)
				}
			}
			d.Covers("tools/call", PhaseRequest)
		}
		r, err := DecodeResult(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("DecodeResult: unclassified error %v", err)
			}
			return
		}
		if r.Blocks() && (r.Valid == nil || *r.Valid) {
			t.Fatalf("blocks without valid=false: %+v", r)
		}
		_ = r.Reason()
		for _, typ := range []string{TypeValidation, TypeMutation} {
			if r.check(typ) == nil && typ == TypeMutation && *r.Modified && !json.Valid(r.Payload) {
				t.Fatalf("accepted a modified mutation with payload %q", r.Payload)
			}
		}
	})
}
