package llmtools

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Change says what an export did to a construct of a tool's definition.
type Change string

// The changes a Note reports.
const (
	// Dropped: the construct is not in the export.
	Dropped Change = "dropped"
	// Rewritten: the construct is in the export in another form (const as
	// enum, a $ref inlined, a non-object schema wrapped, …).
	Rewritten Change = "rewritten"
	// Added: the export has something the server did not write (an array's
	// missing items, a type implied by other keywords).
	Added Change = "added"
	// Renamed: the tool is exported under another name (see Names).
	Renamed Change = "renamed"
)

// Note reports one change an export made to a tool's definition, so that
// nothing a server wrote is lost silently. Changes that cannot alter what
// the model is told or may send (Gemini's upper-case type names, the type
// of a string enum made explicit) are not reported.
type Note struct {
	// Tool is the tool's registry name.
	Tool string `json:"tool"`
	// Pointer is the JSON pointer (RFC 6901) of the construct in the input
	// schema as the server gave it: "" is the whole schema. For a construct
	// inside an inlined $ref it points into the definition. Empty for
	// Renamed.
	Pointer string `json:"pointer"`
	// Change is what happened.
	Change Change `json:"change"`
	// Detail says what the construct was and why it changed. Values the
	// server wrote are quoted.
	Detail string `json:"detail"`
}

// String renders the note on one line: "TOOL: #POINTER: CHANGE: DETAIL",
// or "TOOL: renamed: DETAIL". Characters of the pointer that could break
// the line are escaped.
func (n Note) String() string {
	if n.Change == Renamed {
		return n.Tool + ": " + string(n.Change) + ": " + n.Detail
	}
	ptr := "#" + n.Pointer
	if strings.IndexFunc(ptr, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		ptr = strconv.Quote(ptr)
	}
	return fmt.Sprintf("%s: %s: %s: %s", n.Tool, ptr, n.Change, n.Detail)
}

// pointerJoin appends a reference token to a JSON pointer.
func pointerJoin(ptr, token string) string {
	token = strings.ReplaceAll(token, "~", "~0")
	token = strings.ReplaceAll(token, "/", "~1")
	return ptr + "/" + token
}
