package jsonredact

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Decode decodes one JSON value into any, keeping numbers as they are
// written (json.Number), so that what Encode writes back changes nothing
// but the strings redacted. Data after the value is an error.
func Decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// Encode encodes v without HTML escapes or a trailing newline.
func Encode(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
