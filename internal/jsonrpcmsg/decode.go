// Package jsonrpcmsg decodes JSON-RPC 2.0 messages into the go-sdk's
// jsonrpc types with work and memory in proportion to the message.
//
// jsonrpc.DecodeMessage (go-sdk v1.8.0) decodes through a streaming decoder
// over a bytes.Reader, which allocates a 32 KiB buffer for every message:
// 66 KB and about 14 µs for a 230-byte tools/call, where the message itself
// needs a few hundred bytes (BenchmarkDecode). The gateway decodes every
// message it does not relay, so it decodes with Decode instead: the envelope
// is split by the strict scanner (internal/rawjson: case-sensitive member
// names, no duplicates, nothing after the object), and only the id, method
// and error members are decoded; params and result stay raw, as the go-sdk
// leaves them. It is stricter than the go-sdk in what the strict scanner
// refuses: duplicate or case-variant member names, escaped or non-ASCII
// names, and nesting deeper than rawjson's limit (512, the go-sdk's 1000).
package jsonrpcmsg

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcphost/mcphost/internal/rawjson"
)

// ErrInvalid is wrapped by the errors of messages that are not JSON-RPC 2.0
// messages.
var ErrInvalid = errors.New("invalid JSON-RPC message")

// Decode decodes one JSON-RPC 2.0 message as jsonrpc.DecodeMessage does: a
// member "method" makes it a request (a call with an id, a notification
// without), else it is a response, which needs an id. An id is a string or
// a number (a number is truncated to an integer, as the go-sdk does).
func Decode(data []byte) (jsonrpc.Message, error) {
	var arr [8]rawjson.Member
	ms, err := rawjson.Members(arr[:0], data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	var (
		version, method, id, params, result, errv []byte
		hasMethod                                 bool
	)
	for _, m := range ms {
		switch string(m.Key) {
		case "jsonrpc":
			version = m.Value
		case "id":
			id = m.Value
		case "method":
			method, hasMethod = m.Value, true
		case "params":
			params = m.Value
		case "result":
			result = m.Value
		case "error":
			errv = m.Value
		}
	}
	if v, ok := rawjson.String(version); !ok || v != "2.0" {
		return nil, fmt.Errorf("%w: the version tag is %s, not \"2.0\"", ErrInvalid, version)
	}
	mid, err := decodeID(id)
	if err != nil {
		return nil, err
	}
	if hasMethod {
		name, ok := rawjson.String(method)
		if string(method) == "null" {
			name, ok = "", true // (as the go-sdk reads it)
		}
		if !ok {
			return nil, fmt.Errorf("%w: the method is not a string", ErrInvalid)
		}
		return &jsonrpc.Request{Method: name, ID: mid, Params: raw(params)}, nil
	}
	if !mid.IsValid() {
		return nil, fmt.Errorf("%w: a response without an id", ErrInvalid)
	}
	resp := &jsonrpc.Response{ID: mid, Result: raw(result)}
	if len(errv) > 0 && string(errv) != "null" {
		e, err := decodeError(errv)
		if err != nil {
			return nil, err
		}
		resp.Error = e
	}
	return resp, nil
}

// raw is a member's value as the go-sdk keeps it: absent is nil, null is
// "null" (a result of null is a result: it unmarshals into a zero value).
func raw(v []byte) json.RawMessage {
	if len(v) == 0 {
		return nil
	}
	return json.RawMessage(v)
}

func decodeID(v []byte) (jsonrpc.ID, error) {
	if len(v) == 0 || string(v) == "null" {
		return jsonrpc.ID{}, nil
	}
	if v[0] == '"' {
		s, ok := rawjson.String(v)
		if !ok {
			return jsonrpc.ID{}, fmt.Errorf("%w: the id is not a valid string", ErrInvalid)
		}
		return jsonrpc.MakeID(s)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return jsonrpc.ID{}, fmt.Errorf("%w: the id is neither a string nor a number", ErrInvalid)
	}
	return jsonrpc.MakeID(f)
}

// decodeError decodes an error object: code (a number), message (a string)
// and data (kept raw).
func decodeError(v []byte) (*jsonrpc.Error, error) {
	var arr [4]rawjson.Member
	ms, err := rawjson.Members(arr[:0], v)
	if err != nil {
		return nil, fmt.Errorf("%w: the error is not an object: %v", ErrInvalid, err)
	}
	e := &jsonrpc.Error{}
	for _, m := range ms {
		switch string(m.Key) {
		case "code":
			if string(m.Value) == "null" {
				continue // 0, as the go-sdk reads it
			}
			c, err := strconv.ParseInt(string(m.Value), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: the error code is not an integer", ErrInvalid)
			}
			e.Code = c
		case "message":
			if string(m.Value) == "null" {
				continue // "", as the go-sdk reads it
			}
			s, ok := rawjson.String(m.Value)
			if !ok {
				return nil, fmt.Errorf("%w: the error message is not a string", ErrInvalid)
			}
			e.Message = s
		case "data":
			e.Data = raw(m.Value)
		}
	}
	return e, nil
}
