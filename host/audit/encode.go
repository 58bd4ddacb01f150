package audit

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// timeFormat is RFC 3339 with milliseconds; times are written in UTC, so
// the zone is always "Z".
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// appendRecord appends r as a JSON object, keys in the order of Record's
// fields. It is written by hand, rather than with encoding/json, to fix the
// time and duration formats and to encode without reflection or allocation.
func appendRecord(b []byte, r *Record) []byte {
	b = append(b, `{"time":"`...)
	b = r.Time.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","event":`...)
	b = appendString(b, r.Event)
	b = appendField(b, "iss", r.Issuer)
	b = appendField(b, "sub", r.Subject)
	b = appendField(b, "session", r.Session)
	b = appendField(b, "endpoint", r.Endpoint)
	b = appendField(b, "server", r.Server)
	b = appendField(b, "tool", r.Tool)
	b = appendField(b, "decision", r.Decision)
	b = appendField(b, "rule", r.Rule)
	if len(r.Checks) > 0 {
		b = appendChecks(b, r.Checks)
	}
	b = append(b, `,"outcome":`...)
	b = appendString(b, r.Outcome)
	b = appendInt(b, "status", int64(r.Status))
	b = appendField(b, "reason", r.Reason)
	if r.Duration != 0 {
		b = append(b, `,"duration_ms":`...)
		b = appendMillis(b, r.Duration)
	}
	b = appendInt(b, "request_bytes", int64(r.RequestBytes))
	b = appendInt(b, "response_bytes", int64(r.ResponseBytes))
	b = appendField(b, "remote", r.Remote)
	return append(b, '}')
}

// appendChecks appends ,"checks":[…].
func appendChecks(b []byte, cs []Check) []byte {
	b = append(b, `,"checks":[`...)
	for i := range cs {
		c := &cs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, c.Name)
		b = append(b, `,"kind":`...)
		b = appendString(b, c.Kind)
		b = append(b, `,"event":`...)
		b = appendString(b, c.Event)
		b = append(b, `,"decision":`...)
		b = appendString(b, c.Decision)
		b = appendField(b, "mode", c.Mode)
		b = append(b, `,"ms":`...)
		b = appendMillis(b, c.Duration)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendDropped appends the line reporting n dropped records.
func appendDropped(b []byte, t time.Time, n uint64) []byte {
	b = append(b, `{"time":"`...)
	b = t.UTC().AppendFormat(b, timeFormat)
	b = append(b, `","event":"`+EventDropped+`","dropped":`...)
	b = strconv.AppendUint(b, n, 10)
	return append(b, '}')
}

// appendField appends ,"key":"value" unless value is empty. Keys are
// constants that need no escaping.
func appendField(b []byte, key, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// appendInt appends ,"key":n unless n is zero.
func appendInt(b []byte, key string, n int64) []byte {
	if n == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, n, 10)
}

// appendMillis appends d in milliseconds, rounded to the microsecond:
// 1.5s is 1500, 1234567ns is 1.235.
func appendMillis(b []byte, d time.Duration) []byte {
	us := d.Round(time.Microsecond) / time.Microsecond
	return strconv.AppendFloat(b, float64(us)/1000, 'f', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Like encoding/json, it escapes
// quotes, backslashes, control characters, U+2028 and U+2029, and replaces
// invalid UTF-8 with U+FFFD; unlike it, it leaves <, > and & alone.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0 // s[start:i] is pending, needing no escape
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
