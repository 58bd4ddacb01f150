package sep

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeList(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Descriptor
		err      bool
	}{
		{name: "hooks", in: `{"interceptors":[{"name":"a","type":"validation","hooks":[{"events":["tools/call"],"phase":"request"}]}]}`,
			want: []Descriptor{{Name: "a", Type: "validation", Hooks: []Hook{{[]string{"tools/call"}, "request"}}}}},
		{name: "older hook, both, priority object", in: `{"interceptors":[{"name":"a","type":"mutation","hook":{"events":["*"],"phase":"both"},"priorityHint":{"request":-1000},"mode":"audit","failOpen":true}]}`,
			want: []Descriptor{{Name: "a", Type: "mutation", Hooks: []Hook{{[]string{"*"}, "request"}, {[]string{"*"}, "response"}},
				Priority: Priority{Request: -1000}, Mode: "audit", FailOpen: true}}},
		{name: "priority number", in: `{"interceptors":[{"name":"a","type":"mutation","hooks":[],"priorityHint":-5}]}`,
			want: []Descriptor{{Name: "a", Type: "mutation", Priority: Priority{-5, -5}}}},
		{name: "priority out of range", in: `{"interceptors":[{"name":"a","type":"mutation","priorityHint":2147483648}]}`, err: true},
		{name: "priority not an integer", in: `{"interceptors":[{"name":"a","type":"mutation","priorityHint":1.5}]}`, err: true},
		{name: "unknown phase", in: `{"interceptors":[{"name":"a","type":"validation","hooks":[{"events":["tools/call"],"phase":"later"}]}]}`, err: true},
		{name: "no name", in: `{"interceptors":[{"type":"validation"}]}`, err: true},
		{name: "no type", in: `{"interceptors":[{"name":"a"}]}`, err: true},
		{name: "twice", in: `{"interceptors":[{"name":"a","type":"validation"},{"name":"a","type":"validation"}]}`, err: true},
		{name: "not an object", in: `[1]`, err: true},
		{name: "empty", in: `{"interceptors":[]}`, want: []Descriptor{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeList([]byte(tc.in))
			if tc.err {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("got %+v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v", got)
			}
			for i := range got {
				g, w := got[i], tc.want[i]
				if g.Name != w.Name || g.Type != w.Type || g.Mode != w.Mode || g.FailOpen != w.FailOpen || g.Priority != w.Priority || len(g.Hooks) != len(w.Hooks) {
					t.Fatalf("got %+v, want %+v", g, w)
				}
			}
		})
	}
}

func TestCovers(t *testing.T) {
	d := Descriptor{Hooks: []Hook{{[]string{"tools/call", "prompts/*"}, PhaseRequest}, {[]string{"*/response"}, PhaseResponse}}}
	for _, tc := range []struct {
		event, phase string
		want         bool
	}{
		{"tools/call", PhaseRequest, true},
		{"tools/list", PhaseRequest, false},
		{"prompts/get", PhaseRequest, true},
		{"prompts/", PhaseRequest, false},
		{"resources/read", PhaseResponse, true},
		{"tools/call", PhaseResponse, true},
	} {
		if got := d.Covers(tc.event, tc.phase); got != tc.want {
			t.Errorf("Covers(%s, %s) = %v", tc.event, tc.phase, got)
		}
	}
	if (&Descriptor{Hooks: []Hook{{[]string{"*/request"}, PhaseResponse}}}).Covers("tools/call", PhaseResponse) {
		t.Error("*/request covers a response")
	}
}

func TestDecodeResult(t *testing.T) {
	for _, tc := range []struct {
		name, in, typ string
		blocks        bool
		reason        string
		checkErr      bool
	}{
		{name: "flat deny", typ: TypeValidation, in: `{"type":"validation","valid":false,"severity":"error","messages":[{"message":"no","severity":"error"}]}`, blocks: true, reason: "no"},
		{name: "nested deny", typ: TypeValidation, in: `{"validation":{"valid":false,"severity":"error","messages":[{"message":"no","severity":"error"}]}}`, blocks: true, reason: "no"},
		{name: "warn", typ: TypeValidation, in: `{"valid":false,"severity":"warn","messages":[{"message":"hm","severity":"warn"}]}`, reason: "hm"},
		{name: "no severity: blocks", typ: TypeValidation, in: `{"valid":false}`, blocks: true},
		{name: "message severity error", typ: TypeValidation, in: `{"valid":false,"messages":[{"message":"a","severity":"info"},{"message":"b","severity":"error"}]}`, blocks: true, reason: "b"},
		{name: "message severity info only", typ: TypeValidation, in: `{"valid":false,"messages":[{"message":"a","severity":"info"}]}`, reason: "a"},
		{name: "valid", typ: TypeValidation, in: `{"valid":true}`},
		{name: "validation without valid", typ: TypeValidation, in: `{"type":"validation"}`, checkErr: true},
		{name: "mutation", typ: TypeMutation, in: `{"modified":true,"payload":{"a":1}}`},
		{name: "nested mutation", typ: TypeMutation, in: `{"mutation":{"modified":true},"payload":{"a":1}}`},
		{name: "modified without payload", typ: TypeMutation, in: `{"modified":true,"payload":null}`, checkErr: true},
		{name: "mutation without modified", typ: TypeMutation, in: `{"payload":{}}`, checkErr: true},
		{name: "type mismatch", typ: TypeMutation, in: `{"type":"validation","valid":true,"modified":false}`, checkErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := DecodeResult([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.check(tc.typ); (err != nil) != tc.checkErr || err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("check: %v", err)
			}
			if tc.checkErr {
				return
			}
			if r.Blocks() != tc.blocks || r.Reason() != tc.reason {
				t.Errorf("blocks %v reason %q", r.Blocks(), r.Reason())
			}
		})
	}
	if _, err := DecodeResult([]byte(`"x"`)); !errors.Is(err, ErrMalformed) {
		t.Errorf("a string: %v", err)
	}
}

func TestCapReason(t *testing.T) {
	long := strings.Repeat("é", MaxReason) // 2 bytes each
	got := capReason(long)
	if len(got) > MaxReason+len("…") || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("capped to %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if capReason("short") != "short" {
		t.Error("a short reason changed")
	}
}
