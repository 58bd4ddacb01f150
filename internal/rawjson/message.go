package rawjson

import (
	"errors"
	"math"
	"strconv"
)

// ErrInvalidID is returned by IDKey for an id that is neither a string nor an
// integer (MCP requires one of the two).
var ErrInvalidID = errors.New("rawjson: a request id must be a string or an integer")

// Message scans one JSON-RPC message as the gateway routes it and returns its
// top-level members, appending to dst, and the members of its params object
// (if params is an object), appending to params. It holds the envelope, the
// params object and params._meta to the rules of Members: no duplicate or
// case-variant names, no escaped or non-ASCII names, nothing after the
// object. Those are the objects whose members the gateway or the go-sdk
// decides on (method, id, tool name, progress token, request state);
// arguments and results are forwarded as bytes, and their meaning is the
// upstream's.
func Message(dst, params []Member, b []byte) (ms, ps []Member, err error) {
	first := len(dst)
	ms, err = Members(dst, b)
	if err != nil {
		return ms, params, err
	}
	p, ok := Find(ms[first:], "params")
	if !ok || len(p.Value) == 0 || p.Value[0] != '{' {
		return ms, params, nil
	}
	pfirst := len(params)
	ps, err = Members(params, p.Value)
	if err != nil {
		return ms, ps, err
	}
	if meta, ok := Find(ps[pfirst:], "_meta"); ok && len(meta.Value) > 0 && meta.Value[0] == '{' {
		var marr [8]Member
		if _, err := Members(marr[:0], meta.Value); err != nil {
			return ms, ps, err
		}
	}
	return ms, ps, nil
}

// maxExactInt bounds integer ids: beyond 2^53 a peer decoding numbers as
// float64 (the go-sdk, JavaScript) would merge distinct ids.
const maxExactInt = 1 << 53

// IDKey returns a key that is equal for two ids exactly when a JSON-RPC peer
// decoding them (the go-sdk, encoding/json) sees the same id: a string by its
// decoded value, a number by its integer value, so 50, 50.0 and 5e1 are one
// id. A fractional, out-of-range (beyond ±2^53) or non-string, non-number id is
// ErrInvalidID.
func IDKey(v []byte) (string, error) {
	if len(v) == 0 {
		return "", ErrInvalidID
	}
	if v[0] == '"' {
		s, ok := String(v)
		if !ok {
			return "", ErrInvalidID
		}
		return "s" + s, nil
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return "", ErrInvalidID
	}
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		if n < -maxExactInt || n > maxExactInt {
			return "", ErrInvalidID
		}
		return "n" + strconv.FormatInt(n, 10), nil
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || f != math.Trunc(f) || f < -maxExactInt || f > maxExactInt {
		return "", ErrInvalidID
	}
	return "n" + strconv.FormatInt(int64(f), 10), nil
}

// Elements scans a JSON array and returns its elements' raw bytes, appending
// to dst. Anything after the array but white space is an error.
func Elements(dst [][]byte, b []byte) ([][]byte, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return dst, ErrSyntax
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			e, err := skipValue(b, i, 1)
			if err != nil {
				return dst, err
			}
			dst = append(dst, b[i:e])
			i = skipWS(b, e)
			if i >= len(b) {
				return dst, ErrSyntax
			}
			if b[i] == ',' {
				i = skipWS(b, i+1)
				continue
			}
			if b[i] != ']' {
				return dst, ErrSyntax
			}
			i++
			break
		}
	}
	if skipWS(b, i) != len(b) {
		return dst, ErrSyntax
	}
	return dst, nil
}
