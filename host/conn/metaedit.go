package conn

import "encoding/json"

// editParams decodes a message's params (a JSON object) and its _meta (an
// object, empty when absent), lets edit change their members, and encodes
// the result, without _meta when it was left empty. edit reports whether it
// changed anything (when not, params is returned as it is) and whether it
// accepts the params at all. ok is false when params or its _meta is not a
// JSON object, or edit did not accept them.
//
// The notifications' routes (withRoute) and the elicitations' schemas
// (hideSchema) are carried in _meta through it.
func editParams(params json.RawMessage, edit func(obj, meta map[string]json.RawMessage) (changed, ok bool)) (out json.RawMessage, ok bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(params, &obj); err != nil || obj == nil {
		return nil, false
	}
	var meta map[string]json.RawMessage
	if raw, found := obj["_meta"]; found {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, false
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	changed, ok := edit(obj, meta)
	switch {
	case !ok:
		return nil, false
	case !changed:
		return params, true
	}
	if len(meta) == 0 {
		delete(obj, "_meta")
	} else {
		b, err := json.Marshal(meta)
		if err != nil {
			return nil, false
		}
		obj["_meta"] = b
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, false
	}
	return b, true
}
