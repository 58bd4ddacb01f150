package llmtools

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MaxNameLen is the longest tool name any of the formats accepts: OpenAI
// and Anthropic document ^[a-zA-Z0-9_-]{1,64}$; Gemini documents 128 in
// google.golang.org/genai but 64 in older API versions, so 64 is used.
const MaxNameLen = 64

// Names maps the registry names of an export's tools to the names the
// vendor is given, and back. Registry names (mcp__SERVER__TOOL) are
// normally valid in every format and kept as they are; a name a format does
// not accept is replaced by a valid one (see validName and mapName), and
// the mapping is deterministic for a given tool list. Two registry names
// never map to the same vendor name. A Names is read-only once built and
// safe for concurrent use.
type Names struct {
	toVendor    map[string]string
	toCanonical map[string]string
}

// Canonical returns the registry name of the tool the vendor knows as
// vendorName: what a model's tool call names. ok is false for a name the
// export does not hold.
func (n *Names) Canonical(vendorName string) (name string, ok bool) {
	name, ok = n.toCanonical[vendorName]
	return name, ok
}

// Vendor returns the name under which the tool with the given registry
// name was exported.
func (n *Names) Vendor(canonical string) (name string, ok bool) {
	name, ok = n.toVendor[canonical]
	return name, ok
}

// Len is the number of tools named.
func (n *Names) Len() int { return len(n.toVendor) }

// newNames names the given registry names (distinct) for format f and
// reports every name it had to replace. Valid names are claimed first, so
// a replacement never takes a valid name; replacements are made in sorted
// order, so the result does not depend on the order of canonical.
func newNames(f Format, canonical []string) (*Names, []Note) {
	n := &Names{toVendor: map[string]string{}, toCanonical: map[string]string{}}
	var invalid []string
	for _, c := range canonical {
		if validName(f, c) {
			n.toVendor[c] = c
			n.toCanonical[c] = c
		} else {
			invalid = append(invalid, c)
		}
	}
	sort.Strings(invalid)
	var notes []Note
	for _, c := range invalid {
		var v string
		for attempt := 0; ; attempt++ {
			v = mapName(f, c, attempt)
			if _, taken := n.toCanonical[v]; !taken {
				break
			}
		}
		n.toVendor[c] = v
		n.toCanonical[v] = c
		notes = append(notes, Note{Tool: c, Change: Renamed, Detail: fmt.Sprintf(
			"%s does not accept this name; exported as %q (%s)", f, v, nameRule(f))})
	}
	return n, notes
}

// validName reports whether format f accepts name as a tool name.
func validName(f Format, name string) bool {
	if name == "" || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !nameByte(f, name[i], i == 0) {
			return false
		}
	}
	return true
}

// nameByte reports whether byte c may appear in a tool name of format f
// (first: at its start). OpenAI and Anthropic: [a-zA-Z0-9_-]. Gemini: a
// letter or underscore first, then [a-zA-Z0-9_.:-].
func nameByte(f Format, c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case c >= '0' && c <= '9', c == '-':
		return !(f.gemini() && first)
	case c == '.', c == ':':
		return f.gemini() && !first
	}
	return false
}

// nameRule describes the names format f accepts, for notes.
func nameRule(f Format) string {
	if f.gemini() {
		return "a letter or underscore, then letters, digits, '_', '.', ':' or '-', at most 64"
	}
	return "letters, digits, '_' and '-', at most 64"
}

// mapName returns a valid name of format f for a name it does not accept:
// every byte it does not accept becomes '_' (a multi-byte character one
// '_'), a Gemini name that would start with a digit, '-', '.' or ':' gets
// a leading '_', and the result is cut to leave room for '_' and 8 hex
// digits of a hash of the original name and attempt, which are appended.
// The hash keeps distinct names distinct after the cut; attempt resolves
// the (unlikely, or contrived) case of a name already taken.
func mapName(f Format, name string, attempt int) string {
	var b strings.Builder
	for _, r := range name {
		if r < 0x80 && nameByte(f, byte(r), b.Len() == 0) {
			b.WriteRune(r)
			continue
		}
		if b.Len() == 0 && r < 0x80 && nameByte(f, byte(r), false) {
			b.WriteByte('_') // Gemini: a leading digit, '-', '.' or ':' keeps its place after '_'
			b.WriteRune(r)
			continue
		}
		b.WriteByte('_')
	}
	base := b.String()
	if base == "" {
		base = "tool"
	}
	sum := sha256.Sum256([]byte(name + "\x00" + strconv.Itoa(attempt)))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(base) > MaxNameLen-len(suffix) {
		base = base[:MaxNameLen-len(suffix)]
	}
	return base + suffix
}
