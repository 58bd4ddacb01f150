package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The analyzer turns text into index terms, the same way for a tool's
// fields and for a query: split into words (at anything that is not a
// letter or digit, and inside identifiers at case changes: createPullRequest,
// HTTPServer), lower-cased, one-character words and common English words
// dropped, and English inflections folded (light stemming: issues → issu,
// created → creat).

const (
	// MaxQueryBytes is how much of a query is read; the rest is ignored.
	MaxQueryBytes = 1024
	// maxQueryTerms bounds the distinct terms of a query.
	maxQueryTerms = 32
	// maxTermBytes bounds one term; longer words are cut.
	maxTermBytes = 64
)

// words calls emit with each word of s, lower-cased, in order. A word is a
// run of letters and digits, split further where an identifier changes
// case: before an upper-case letter that follows a lower-case one
// (pullRequest) or a digit (v2Users), and before the last of a run of
// upper-case letters that a lower-case one follows (HTTPServer). Letters
// and digits are not split (s3, ec2, oauth2). Words of one character are
// dropped; a word longer than maxTermBytes is cut at a character boundary.
// The word emit is given is only valid during the call; buf is scratch
// space for it.
func words(s string, buf []byte, emit func(w []byte)) {
	buf = buf[:0]
	runes := 0
	flush := func() {
		if runes >= 2 {
			emit(buf)
		}
		buf, runes = buf[:0], 0
	}
	prev := rune(-1) // the previous rune, if it was a letter or digit
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if !alnum(r) {
			flush()
			prev = -1
			continue
		}
		if unicode.IsUpper(r) && prev >= 0 {
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				flush()
			} else if unicode.IsUpper(prev) && i < len(s) {
				if next, _ := utf8.DecodeRuneInString(s[i:]); unicode.IsLower(next) {
					flush()
				}
			}
		}
		prev = r
		if lr := unicode.ToLower(r); len(buf)+utf8.RuneLen(lr) <= maxTermBytes {
			buf = utf8.AppendRune(buf, lr)
			runes++
		}
	}
	flush()
}

func alnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// analyzer turns a field's text into terms (see terms), remembering what
// each word became: a catalogue's fields share most of their words.
type analyzer struct {
	seen map[string]string // word → term, "" for a stop word
	buf  []byte
}

func newAnalyzer() *analyzer {
	return &analyzer{seen: map[string]string{}, buf: make([]byte, 0, maxTermBytes)}
}

// terms calls emit with each index term of s: its words, without stop
// words, stemmed.
func (a *analyzer) terms(s string, emit func(string)) {
	words(s, a.buf, func(w []byte) {
		t, ok := a.seen[string(w)]
		if !ok {
			word := string(w)
			if !stopWords[word] {
				t = stem(word)
			}
			a.seen[word] = t
		}
		if t != "" {
			emit(t)
		}
	})
}

// queryTerms returns the distinct terms of a query (at most maxQueryTerms,
// from its first MaxQueryBytes). A query of nothing but stop words keeps
// them ("who am i" is still a question), stemmed.
func queryTerms(q string) []string {
	if len(q) > MaxQueryBytes {
		cut := MaxQueryBytes
		for cut > 0 && !utf8.RuneStart(q[cut]) {
			cut--
		}
		q = q[:cut]
	}
	var out, stops []string
	seen := map[string]bool{}
	add := func(list *[]string, t string) {
		if !seen[t] && len(*list) < maxQueryTerms {
			seen[t] = true
			*list = append(*list, t)
		}
	}
	words(q, make([]byte, 0, maxTermBytes), func(b []byte) {
		w := string(b)
		if stopWords[w] {
			add(&stops, stem(w))
			return
		}
		add(&out, stem(w))
	})
	if len(out) == 0 {
		return stops
	}
	return out
}

// stem folds the common English inflections of a lower-case word: plurals
// (issues, entries, branches), -ing and -ed (creating, created), and a final
// e (create), so that create, creates, created and creating are one term.
// It is deliberately light (no derivational suffixes: -ation, -ment, -ize
// stay): a stem is only ever compared with other stems. Words with anything
// but ASCII letters, and words of fewer than four letters, are kept as they
// are.
func stem(w string) string {
	if len(w) < 4 || keep[w] {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "ches"),
		strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "zes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	for _, suf := range []string{"ing", "ed"} {
		if base := strings.TrimSuffix(w, suf); base != w && len(base) >= 3 && strings.ContainsAny(base, "aeiouy") {
			w = base
			if n := len(w); w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
				w = w[:n-1] // running → run, stopped → stop; not call, pass, buzz
			}
			break
		}
	}
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

// keep are words stem would fold into others they do not mean.
var keep = map[string]bool{"news": true, "series": true, "always": true, "species": true, "bias": true, "alias": true, "canvas": true, "atlas": true}

// stopWords are dropped from fields and queries: words that say nothing
// about what a tool does, common in requests ("can you show me all of my
// ...") and in descriptions alike.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		a about above after again all also am an and any are as at be because been before being
		both but by can could did do does doing done each either else etc for from had has have
		having he her here hers him his how however i if in into is it its itself just let lets
		like many may me might mine more most much must my myself no nor not now of off on once only
		onto or other our ours out over own per please same shall she should so some such than
		that the their theirs them then there these they this those through to too under until
		up upon us very via was we were what when where whether which while who whom whose why
		will with within without would yes yet you your yours im ive want wanna need
		some something somebody thing things`) {
		m[w] = true
	}
	return m
}()

// SharedTerms returns the terms of query, as Search reads it, that text
// has too, as a field of the index is read (words split and lower-cased,
// stop words dropped, inflections folded), in the query's order. It says
// whether a query names what it looks for: for instance the words a
// request shares with the name of the tool that answers it.
func SharedTerms(query, text string) []string {
	has := map[string]bool{}
	newAnalyzer().terms(text, func(t string) { has[t] = true })
	var out []string
	for _, t := range queryTerms(query) {
		if has[t] {
			out = append(out, t)
		}
	}
	return out
}
