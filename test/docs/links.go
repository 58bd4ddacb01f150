package docs

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// Markdown links: inline [text](target "title"), images ![alt](target), and
// reference definitions "[label]: target". Enough of CommonMark for the
// repository's own pages, which is all it reads (a full Markdown parser
// would add a dependency for this one check).
var (
	inlineLink   = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refLink      = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	htmlLink     = regexp.MustCompile(`(?i)<(?:a|img)\s[^>]*(?:href|src)\s*=\s*"([^"]*)"`)
	codeSpan     = regexp.MustCompile("`+[^`]*`+")
	bareURL      = regexp.MustCompile(`<(?:https?|ftp|file|mailto):[^>]*>`)
	outsideWords = []string{"../shared"}
)

// Problem is one link of a Markdown file that does not resolve inside the
// repository.
type Problem struct {
	File string // relative to the repository's root
	Line int
	Link string
	Why  string
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Link, p.Why) }

// CheckLinks checks the links of the Markdown file rel (a slash path
// relative to root): each must be relative, resolve to an existing file or
// directory inside root, and name an existing heading when it has a
// fragment. Text that points outside the repository (../shared/…) is a
// problem too, in code as well.
func CheckLinks(root, rel string) ([]Problem, error) {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	var probs []Problem
	lines := strings.Split(string(src), "\n")
	fence := ""
	for i, line := range lines {
		for _, w := range outsideWords {
			if strings.Contains(line, w) {
				probs = append(probs, Problem{rel, i + 1, w, "points outside the repository"})
			}
		}
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
				continue
			case strings.HasPrefix(f, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, "`~")) == "":
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		text := codeSpan.ReplaceAllString(line, "")
		var targets []string
		for _, re := range []*regexp.Regexp{inlineLink, refLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				targets = append(targets, m[1])
			}
		}
		for _, m := range bareURL.FindAllString(text, -1) {
			targets = append(targets, strings.Trim(m, "<>"))
		}
		for _, t := range targets {
			if why := checkTarget(root, rel, t); why != "" {
				probs = append(probs, Problem{rel, i + 1, t, why})
			}
		}
	}
	return probs, nil
}

func fenceOf(line string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(line, f) {
			n := len(line) - len(strings.TrimLeft(line, f[:1]))
			return line[:n]
		}
	}
	return ""
}

// checkTarget says why target, a link in the file rel, does not resolve
// inside root ("" when it does).
func checkTarget(root, rel, target string) string {
	if target == "" {
		return "an empty link"
	}
	u, err := url.Parse(target)
	if err != nil {
		return "not a valid link: " + err.Error()
	}
	if u.Scheme != "" || u.Host != "" || strings.HasPrefix(target, "//") {
		return "points outside the repository (only relative links to its files)"
	}
	if strings.HasPrefix(u.Path, "/") {
		return "an absolute path: link relative to this file"
	}
	file := rel
	if u.Path != "" {
		file = filepath.ToSlash(filepath.Join(filepath.Dir(filepath.FromSlash(rel)), filepath.FromSlash(u.Path)))
		if file == ".." || strings.HasPrefix(file, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(file))); err != nil {
			return "no such file in the repository"
		}
	}
	if u.Fragment == "" || !strings.HasSuffix(file, ".md") {
		return ""
	}
	anchors, err := Anchors(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return err.Error()
	}
	if !anchors[u.Fragment] {
		return fmt.Sprintf("no heading #%s in %s", u.Fragment, file)
	}
	return ""
}

// Anchors returns the anchors of a Markdown file's headings, as GitHub
// makes them: lower case, punctuation other than '-' and '_' removed,
// spaces made '-', a repeated anchor suffixed -1, -2, ...
func Anchors(path string) (map[string]bool, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(src), "\n") {
		if f := fenceOf(strings.TrimLeft(line, " ")); f != "" {
			if fence == "" {
				fence = f
			} else if strings.HasPrefix(f, fence) {
				fence = ""
			}
			continue
		}
		if fence != "" || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(title, " ") {
			continue
		}
		a := Slug(title)
		if n := seen[a]; n > 0 {
			seen[a]++
			a = fmt.Sprintf("%s-%d", a, n)
		} else {
			seen[a] = 1
		}
		anchors[a] = true
	}
	return anchors, nil
}

// Slug is GitHub's anchor of a heading's text.
func Slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// MarkdownFiles lists README.md, CHANGELOG.md and every .md file under
// docs/ of root, as slash paths relative to root.
func MarkdownFiles(root string) ([]string, error) {
	files := []string{"README.md", "CHANGELOG.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}
