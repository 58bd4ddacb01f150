package docs

import (
	"fmt"
	"strings"
)

// NotRunMarker, on the line before a command block of README.md (blank
// lines between allowed), keeps the block from being run by the README
// test; what follows it up to "-->" is the reason, which must be given:
//
//	<!-- not run: starts a long-running server -->
const NotRunMarker = "<!-- not run:"

// Block is one ```sh or ```console block of a Markdown file.
type Block struct {
	Line     int       // the line of its opening fence (1-based)
	Commands []Command // its commands, in order
	NotRun   string    // the reason of a NotRunMarker before it, or ""
}

// Command is one command of a block: a line, with the lines it continues
// onto (a trailing backslash) joined.
type Command struct {
	Line int // where it starts (1-based)
	Text string
}

// CommandBlocks returns the sh and console blocks of a Markdown text. In a
// sh block every line that is not blank or a comment is a command; in a
// console block only the lines after a "$ " prompt are (the others are
// output).
func CommandBlocks(text string) ([]Block, error) {
	lines := strings.Split(text, "\n")
	var blocks []Block
	for i := 0; i < len(lines); i++ {
		lang, ok := strings.CutPrefix(strings.TrimSpace(lines[i]), "```")
		if !ok {
			continue
		}
		lang = strings.TrimSpace(lang)
		end := i + 1
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "```") {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("line %d: a code block is not closed", i+1)
		}
		if lang == "sh" || lang == "console" || lang == "shell" || lang == "bash" {
			b := Block{Line: i + 1}
			reason, err := notRunBefore(lines, i)
			if err != nil {
				return nil, err
			}
			b.NotRun = reason
			b.Commands = commandsOf(lines[i+1:end], i+2, lang == "console")
			if len(b.Commands) == 0 {
				return nil, fmt.Errorf("line %d: a %s block without a command", i+1, lang)
			}
			blocks = append(blocks, b)
		}
		i = end
	}
	return blocks, nil
}

// notRunBefore returns the reason of a NotRunMarker just before the fence
// at line index i ("" when there is none).
func notRunBefore(lines []string, i int) (string, error) {
	j := i - 1
	for j >= 0 && strings.TrimSpace(lines[j]) == "" {
		j--
	}
	if j < 0 {
		return "", nil
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(lines[j]), NotRunMarker)
	if !ok {
		return "", nil
	}
	reason, ok := strings.CutSuffix(rest, "-->")
	reason = strings.TrimSpace(reason)
	if !ok || reason == "" {
		return "", fmt.Errorf("line %d: %s needs a reason and a closing -->, on one line", j+1, NotRunMarker)
	}
	return reason, nil
}

func commandsOf(lines []string, first int, console bool) []Command {
	var cmds []Command
	for k := 0; k < len(lines); k++ {
		line := lines[k]
		if console {
			after, ok := strings.CutPrefix(line, "$ ")
			if !ok {
				continue // output
			}
			line = after
		}
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		c := Command{Line: first + k, Text: t}
		for strings.HasSuffix(c.Text, `\`) && k+1 < len(lines) {
			k++
			c.Text = strings.TrimSuffix(c.Text, `\`) + " " + strings.TrimSpace(lines[k])
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// Words splits the first simple command of a shell line into words, with
// quotes and backslashes removed, leading VAR=value assignments skipped,
// and up to the first operator (|, ;, &, <, >, a comment): enough to find
// which mcphost command a README line runs (a shell-words library would be
// one more dependency for a test's look at lines this repository writes).
func Words(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
loop:
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				cur.WriteString(line[i+1:])
				break loop
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				cur.WriteByte(line[i])
			}
		case c == '\\' && i+1 < len(line):
			inWord = true
			i++
			cur.WriteByte(line[i])
		case c == ' ' || c == '\t':
			flush()
		case strings.IndexByte("|;&<>", c) >= 0 || (c == '#' && !inWord):
			break loop
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	flush()
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	return words
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
