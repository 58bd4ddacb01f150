package llmtools

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// OverLimit: the export holds more tools than the vendor documents it
	// takes in one request (see toolLimits). Nothing was changed, and the
	// note is about the whole export: Tool and Pointer are empty.
	OverLimit Change = "over-limit"
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
// "TOOL: renamed: DETAIL", or "over-limit: DETAIL". Characters that could
// break the line, or reorder or hide text on a terminal (controls, bidi
// and other invisible characters), are escaped: the pointer is quoted, and
// in the tool and the detail they are written as \u escapes.
func (n Note) String() string {
	tool, detail := escapeInvisible(n.Tool), escapeInvisible(n.Detail)
	switch n.Change {
	case Renamed:
		return tool + ": " + string(n.Change) + ": " + detail
	case OverLimit:
		return string(n.Change) + ": " + detail
	}
	ptr := "#" + n.Pointer
	if strings.IndexFunc(ptr, invisible) >= 0 || !utf8.ValidString(ptr) {
		ptr = strconv.Quote(ptr)
	}
	return fmt.Sprintf("%s: %s: %s: %s", tool, ptr, n.Change, detail)
}

// pointerJoin appends a reference token to a JSON pointer.
func pointerJoin(ptr, token string) string {
	token = strings.ReplaceAll(token, "~", "~0")
	token = strings.ReplaceAll(token, "/", "~1")
	return ptr + "/" + token
}
