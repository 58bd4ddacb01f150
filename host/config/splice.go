package config

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Editing a user's file by splicing bytes. hclwrite.File.Bytes formats the
// whole file (hand-aligned "=" and comments, spacing and indentation of
// blocks an edit never touched all change), so the edits of this package
// build only what they add with hclwrite, formatted alone, and splice it
// into the file's own bytes, or cut a block's bytes out of them: every
// byte outside the edited block stays as it was (issue 37, part 9).

// eolOf returns the line end that the lines an edit adds to src get: CRLF
// when src has any (a file written on Windows), else LF.
func eolOf(src []byte) string {
	if bytes.Contains(src, []byte("\r\n")) {
		return "\r\n"
	}
	return "\n"
}

// withEOL returns text, whose lines end in LF, with its lines ending in eol.
func withEOL(text []byte, eol string) []byte {
	if eol == "\n" {
		return text
	}
	return bytes.ReplaceAll(text, []byte("\n"), []byte(eol))
}

// appendBlock returns src with block (a formatted block whose lines end in
// LF) appended: after a line end if src lacks a final one, and after a blank
// line if src has any content. The block's lines end like src's.
func appendBlock(src, block []byte) []byte {
	eol := eolOf(src)
	out := make([]byte, 0, len(src)+len(block)+2*len(eol))
	out = append(out, src...)
	if len(src) > 0 && src[len(src)-1] != '\n' {
		out = append(out, eol...)
	}
	if len(bytes.TrimSpace(src)) > 0 {
		out = append(out, eol...)
	}
	return append(out, withEOL(block, eol)...)
}

// itemSpan returns the bytes [start, end) of src that a top-level item
// (a block or attribute) of range rng occupies with what belongs to it:
// its indentation, its lead comments (the comment lines just above it, with
// no blank line between, and a comment before it on its first line), and
// the rest of its last line (a line comment, the line end). toks are src's
// tokens (hclsyntax.LexConfig). A line comment of the item before it is
// not one of its lead comments.
func itemSpan(toks hclsyntax.Tokens, rng hcl.Range) (start, end int) {
	i := 0
	for i < len(toks) && toks[i].Range.Start.Byte < rng.Start.Byte {
		i++
	}
	k := i
	for k > 0 && toks[k-1].Type == hclsyntax.TokenComment {
		k--
	}
	if k > 0 && toks[k-1].Type != hclsyntax.TokenNewline {
		// The comments begin on the line of the item before: those up to
		// the one that ends that line are its line comments.
		for k < i && !endsLine(toks[k]) {
			k++
		}
		if k < i {
			k++
		}
	}
	if k > 0 {
		start = toks[k-1].Range.End.Byte
	}

	end = rng.End.Byte
	for j := i; j < len(toks); j++ {
		if toks[j].Range.Start.Byte < rng.End.Byte {
			continue
		}
		t := toks[j]
		if t.Type == hclsyntax.TokenComment {
			end = t.Range.End.Byte
			if endsLine(t) {
				break
			}
			continue
		}
		if t.Type == hclsyntax.TokenNewline {
			end = t.Range.End.Byte
		}
		break
	}
	return start, end
}

// endsLine reports whether t ends its line: a newline, or a line comment,
// whose token holds the line end.
func endsLine(t hclsyntax.Token) bool {
	return bytes.HasSuffix(t.Bytes, []byte("\n"))
}

// cutItem returns before and after (src without an item's bytes, cut at
// that point) joined so that the cut leaves no doubled blank line: a line
// holding only spaces and tabs counts as blank.
//   - The item was last (after is blank): the file ends after the last line
//     of before with content, with its line end (nil if there is none).
//   - The item was first and a blank line follows: that line goes.
//   - A blank line precedes and follows it: the one that follows goes.
//
// Every other byte of before and after is kept.
func cutItem(before, after []byte, eol string) []byte {
	if isBlank(after) {
		lines := bytes.SplitAfter(before, []byte("\n"))
		for len(lines) > 0 && isBlank(lines[len(lines)-1]) {
			lines = lines[:len(lines)-1]
		}
		if len(lines) == 0 {
			return nil
		}
		out := bytes.Join(lines, nil)
		if out[len(out)-1] != '\n' {
			out = append(out, eol...)
		}
		return out
	}
	first := after
	if i := bytes.IndexByte(after, '\n'); i >= 0 {
		first = after[:i+1]
	}
	firstBlank := first[len(first)-1] == '\n' && isBlank(first)
	if firstBlank && (len(before) == 0 || endsWithBlankLine(before)) {
		after = after[len(first):]
	}
	out := make([]byte, 0, len(before)+len(after))
	return append(append(out, before...), after...)
}

// endsWithBlankLine reports whether the last line of b (which ends in a
// line end) is blank.
func endsWithBlankLine(b []byte) bool {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return false
	}
	return isBlank(b[bytes.LastIndexByte(b[:len(b)-1], '\n')+1:])
}

// isBlank reports whether b holds only spaces, tabs and line ends.
func isBlank(b []byte) bool {
	return len(bytes.Trim(b, " \t\r\n")) == 0
}

// lineIndent returns the spaces and tabs before offset at on its line, or
// "" when something else precedes it there.
func lineIndent(src []byte, at int) string {
	ls := bytes.LastIndexByte(src[:at], '\n') + 1
	if ind := src[ls:at]; len(bytes.Trim(ind, " \t")) == 0 {
		return string(ind)
	}
	return ""
}

// reindent returns text (lines ending in LF, the last without one) with
// every line but the first indented by indent and the lines ending in eol:
// text formatted at the top level, to be spliced in at a deeper level.
func reindent(text []byte, indent, eol string) []byte {
	return bytes.ReplaceAll(text, []byte("\n"), []byte(eol+indent))
}
