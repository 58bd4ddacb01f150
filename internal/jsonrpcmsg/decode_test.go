package jsonrpcmsg

import (
	"bytes"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var seeds = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"the quick brown fox jumps over the lazy dog"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	`{"jsonrpc":"2.0","id":"a\u00e9","result":{"content":[]}}`,
	`{"jsonrpc":"2.0","id":1.9,"error":{"code":-32602,"message":"bad","data":{"x":1}}}`,
	`{"jsonrpc":"2.0","id":null,"method":""}`,
	`{"jsonrpc":"2.0","id":3,"result":null}`,
	`{"jsonrpc":"2.0","id":3,"method":"x","params":null}`,
	`{"jsonrpc":"2.0","id":3,"error":null,"result":{}}`,
	`{"jsonrpc":"1.0","id":3,"method":"x"}`,
	`{"jsonrpc":"2.0","id":true,"method":"x"}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`[]`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":1e2,"message":"x"}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x","data":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":null,"message":null}}`,
}

// TestDecodeAsGoSDK: on every seed, Decode and jsonrpc.DecodeMessage agree
// (see FuzzDecode).
func TestDecodeAsGoSDK(t *testing.T) {
	for _, s := range seeds {
		agree(t, []byte(s))
	}
}

// FuzzDecode: whatever Decode takes, jsonrpc.DecodeMessage takes and reads
// the same; what the go-sdk takes, Decode takes too, unless the strict scan
// refuses it (duplicate or escaped member names, which the go-sdk reads as
// one of the members).
func FuzzDecode(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { agree(t, data) })
}

func agree(t *testing.T, data []byte) {
	t.Helper()
	ours, err := Decode(data)
	theirs, terr := jsonrpc.DecodeMessage(data)
	switch {
	case err != nil && terr != nil:
		return
	case err != nil:
		return // (stricter: see FuzzDecode)
	case terr != nil:
		t.Fatalf("Decode took what the go-sdk refuses (%v): %s", terr, data)
	}
	switch o := ours.(type) {
	case *jsonrpc.Request:
		th, ok := theirs.(*jsonrpc.Request)
		if !ok || o.Method != th.Method || o.ID != th.ID || !sameRaw(o.Params, th.Params) {
			t.Fatalf("request differs:\n ours %+v\n sdk  %+v\n in %s", o, theirs, data)
		}
	case *jsonrpc.Response:
		th, ok := theirs.(*jsonrpc.Response)
		if !ok || o.ID != th.ID || !sameRaw(o.Result, th.Result) || (o.Error == nil) != (th.Error == nil) {
			t.Fatalf("response differs:\n ours %+v\n sdk  %+v\n in %s", o, theirs, data)
		}
		if o.Error != nil {
			oe, te := o.Error.(*jsonrpc.Error), th.Error.(*jsonrpc.Error)
			if oe.Code != te.Code || oe.Message != te.Message || !sameRaw(oe.Data, te.Data) {
				t.Fatalf("error differs:\n ours %+v\n sdk  %+v\n in %s", oe, te, data)
			}
		}
	default:
		t.Fatalf("decoded as %T", ours)
	}
}

// sameRaw: raw values are the same JSON text, or both absent (null is not
// absent: a result of null decodes, an absent one does not).
func sameRaw(a, b []byte) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
}

// BenchmarkDecode compares the go-sdk's decoding of a 230-byte tools/call
// with Decode (see the package comment): run with -benchmem.
func BenchmarkDecode(b *testing.B) {
	msg := []byte(seeds[0])
	b.Run("go-sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsonrpc.DecodeMessage(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonrpcmsg", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decode(msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeNulls: nulls the go-sdk reads as zero values are read so too
// (an error response with a null message still ends its call).
func TestDecodeNulls(t *testing.T) {
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":null}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":null,"message":null}}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
	} {
		if _, err := Decode([]byte(in)); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}
