package toolsearch

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/mcphost/mcphost/host/registry"
)

func TestWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"mcp__forge__create_pull_request", []string{"mcp", "forge", "create", "pull", "request"}},
		{"createPullRequest", []string{"create", "pull", "request"}},
		{"get-file-contents", []string{"get", "file", "contents"}},
		{"HTTPServer parseJSONBody", []string{"http", "server", "parse", "json", "body"}},
		{"getV2Users", []string{"get", "v2", "users"}},
		{"S3Bucket ec2 oauth2", []string{"s3", "bucket", "ec2", "oauth2"}},
		{"ALLCAPS", []string{"allcaps"}},
		{"a b c ok", []string{"ok"}},
		{"Größe ändern, café", []string{"größe", "ändern", "café"}},
		{"東京 天気", []string{"東京", "天気"}},
		{"what's up?!", []string{"what", "up"}},
		{"203.0.113.7", []string{"203", "113"}},
		{"\xff\xfeok\x00fine", []string{"ok", "fine"}},
		{strings.Repeat("x", 100), []string{strings.Repeat("x", maxTermBytes)}},
		{strings.Repeat("é", 40), []string{strings.Repeat("é", maxTermBytes/2)}},
	} {
		var got []string
		words(tc.in, nil, func(w []byte) { got = append(got, string(w)) })
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("words(%.40q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	// Each group folds to one term.
	for _, group := range [][]string{
		{"create", "creates", "created", "creating"},
		{"issue", "issues"},
		{"meeting", "meetings", "meet"},
		{"query", "queries"},
		{"branch", "branches"},
		{"address", "addresses"},
		{"run", "runs", "running"},
		{"stop", "stopped", "stopping"},
		{"call", "called", "calls"},
		{"status", "statuses"},
		{"log", "logs", "logged", "logging"},
		{"update", "updated", "updates"},
		{"message", "messages"},
	} {
		want := stem(group[0])
		for _, w := range group[1:] {
			if got := stem(w); got != want {
				t.Errorf("stem(%q) = %q, stem(%q) = %q: want one term", w, got, group[0], want)
			}
		}
	}
	// And these stay apart, or as they are.
	for _, tc := range []struct{ in, want string }{
		{"news", "news"},
		{"this", "this"},
		{"need", "need"},
		{"string", "string"},
		{"pass", "pass"},
		{"café", "café"},
		{"s3", "s3"},
		{"v2users", "v2users"},
	} {
		if got := stem(tc.in); got != tc.want {
			t.Errorf("stem(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if stem("news") == stem("new") {
		t.Error("news and new are one term")
	}
}

func TestQueryTerms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"?!", nil},
		{"open a pull request for my branch", []string{"open", "pull", "request", "branch"}},
		{"what meetings do I have tomorrow", []string{"meet", "tomorrow"}},
		{"Issues issue ISSUES", []string{"issu"}},
		{"who am i", []string{"who", "am"}}, // only stop words: kept
		{strings.Repeat("x ", 10) + "alpha beta", []string{"alpha", "beta"}},
	} {
		if diff := cmp.Diff(tc.want, queryTerms(tc.in)); diff != "" {
			t.Errorf("queryTerms(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	var many []string
	for i := range 100 {
		many = append(many, "w"+strings.Repeat("a", i+1))
	}
	if got := queryTerms(strings.Join(many, " ")); len(got) != maxQueryTerms {
		t.Errorf("%d terms of a 100-word query, want %d", len(got), maxQueryTerms)
	}
	if got := queryTerms(strings.Repeat("é", MaxQueryBytes) + " tail"); slices.Contains(got, "tail") {
		t.Error("a word past MaxQueryBytes was read")
	}
}

// tool is a registry tool for the ranking tests.
func tool(server, name, title, desc string, params ...string) *registry.Tool {
	props := map[string]any{}
	for _, p := range params {
		n, d, _ := strings.Cut(p, ":")
		props[n] = map[string]any{"type": "string", "description": d}
	}
	if title == "" {
		title = name
	}
	return &registry.Tool{Name: "mcp__" + server + "__" + name, Server: server, Original: name, DisplayName: title, Description: desc,
		InputSchema: map[string]any{"type": "object", "properties": props}}
}

var testTools = []*registry.Tool{
	tool("forge", "create_pull_request", "Create pull request", "Open a pull request to merge a head branch into a base branch.", "head:Branch with the changes.", "base:Branch to merge into."),
	tool("forge", "list_issues", "", "List the issues of a repository.", "state:open or closed"),
	tool("forge", "create_issue", "", "Create an issue.", "title:Issue title.", "body:Issue text."),
	tool("calendar", "list_events", "List events", "List calendar events (meetings, appointments) between two times.", "time_min:Start.", "time_max:End."),
	tool("calendar", "create_event", "", "Create a calendar event and invite attendees.", "attendees:Emails of the people to invite."),
	tool("chat", "postMessage", "", "Send a message to a channel.", "channel:Channel name.", "text:Message text."),
	tool("weather", "get_forecast", "", "Daily weather forecast for up to 14 days.", "location:City name."),
	tool("fs", "read_file", "", "Read the complete contents of a file.", "path:Absolute path."),
}

func names(rs []Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Tool.Name)
	}
	return out
}

func TestSearch(t *testing.T) {
	t.Parallel()
	ix := New(testTools, nil)
	for _, tc := range []struct {
		name  string
		query string
		opts  *SearchOptions
		want  []string // the first results, in order
	}{
		{"name words", "create pull request", nil, []string{"mcp__forge__create_pull_request"}},
		{"description words and inflection", "which meetings are between these times", nil, []string{"mcp__calendar__list_events"}},
		{"camel case name", "post message", nil, []string{"mcp__chat__postMessage"}},
		{"registry name", "mcp__fs__read_file", nil, []string{"mcp__fs__read_file"}},
		{"parameter name", "attendees", nil, []string{"mcp__calendar__create_event"}},
		{"parameter description", "absolute path", nil, []string{"mcp__fs__read_file"}},
		{"title", "list events", nil, []string{"mcp__calendar__list_events"}},
		{"server name", "weather", nil, []string{"mcp__weather__get_forecast"}},
		{"server filter", "create", &SearchOptions{Server: "calendar"}, []string{"mcp__calendar__create_event"}},
		{"limit", "create", &SearchOptions{Limit: 2}, []string{"mcp__forge__create_issue", "mcp__calendar__create_event"}},
		{"filter", "create issue", &SearchOptions{Filter: func(t *registry.Tool) bool { return t.Original != "create_issue" }}, []string{"mcp__forge__list_issues"}},
		{"nothing matches", "quantum entanglement", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := ix.Search(tc.query, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got := names(rs)
			if len(got) > len(tc.want) && tc.opts != nil && tc.opts.Limit > 0 {
				t.Errorf("%d results, limit %d", len(got), tc.opts.Limit)
			}
			if len(got) > len(tc.want) {
				got = got[:len(tc.want)]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", tc.query, diff)
			}
			for i := 1; i < len(rs); i++ {
				if rs[i].Score > rs[i-1].Score {
					t.Errorf("results out of order: %v", rs)
				}
			}
		})
	}
}

func TestSearchEdges(t *testing.T) {
	t.Parallel()
	ix := New(testTools, nil)
	if _, err := ix.Search(" ,;!? ", nil); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("an empty query: %v, want ErrEmptyQuery", err)
	}
	if rs, _ := ix.Search("create", nil); len(rs) != 3 {
		t.Errorf("%d results for create, want all 3 (the default limit is %d)", len(rs), DefaultLimit)
	}
	if rs, _ := ix.Search("create", &SearchOptions{Server: "nope"}); len(rs) != 0 {
		t.Errorf("results of an unknown server: %v", names(rs))
	}
	if rs, err := New(nil, nil).Search("anything", nil); err != nil || len(rs) != 0 {
		t.Errorf("an empty index: %v %v", rs, err)
	}
	// A tool named twice is indexed once (the first); nil is skipped.
	dup := tool("forge", "list_issues", "", "Something else entirely.")
	ix = New([]*registry.Tool{testTools[1], nil, dup}, nil)
	if ix.Len() != 1 {
		t.Errorf("Len %d, want 1", ix.Len())
	}
	if got, _ := ix.Tool("mcp__forge__list_issues"); got != testTools[1] {
		t.Errorf("Tool returned %v, want the first definition", got)
	}
	if _, ok := ix.Tool("mcp__forge__nope"); ok {
		t.Error("Tool found a tool not indexed")
	}
	// Equal scores come in name order.
	same := []*registry.Tool{tool("b", "zeta", "", "Same words."), tool("a", "alpha", "", "Same words.")}
	rs, _ := New(same, &Options{Weights: &Weights{Description: 1}}).Search("same words", nil)
	if diff := cmp.Diff([]string{"mcp__a__alpha", "mcp__b__zeta"}, names(rs)); diff != "" {
		t.Errorf("ties (-want +got):\n%s", diff)
	}
	// A field of weight 0 is not searched.
	rs, _ = New(testTools, &Options{Weights: &Weights{Name: 1}}).Search("absolute path", nil)
	if len(rs) != 0 {
		t.Errorf("a field of weight 0 was searched: %v", names(rs))
	}
}

// FuzzQuery: whatever a client sends as a query, the analyzer yields
// bounded, distinct, lower-case, valid UTF-8 terms, and a search returns at
// most its limit, best first.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"", "open a pull request", "mcp__forge__create_pull_request", "HTTPServer getV2Users", "\xff\xfe", "東京の天気", "İSTANBUL ǅemal ß", strings.Repeat("a", 2000)} {
		f.Add(s, 5)
	}
	ix := New(testTools, nil)
	f.Fuzz(func(t *testing.T, q string, limit int) {
		terms := queryTerms(q)
		if len(terms) > maxQueryTerms {
			t.Errorf("%d terms", len(terms))
		}
		seen := map[string]bool{}
		for _, term := range terms {
			if term == "" || len(term) > maxTermBytes || !utf8.ValidString(term) || seen[term] {
				t.Errorf("term %q of %q", term, q)
			}
			seen[term] = true
			for _, r := range term {
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					t.Errorf("term %q has %q", term, r)
				}
			}
		}
		limit = limit%50 - 5
		rs, err := ix.Search(q, &SearchOptions{Limit: limit})
		if err != nil {
			if !errors.Is(err, ErrEmptyQuery) || len(terms) > 0 {
				t.Errorf("Search(%q): %v", q, err)
			}
			return
		}
		if max := max(limit, 0); max == 0 && len(rs) > DefaultLimit || max > 0 && len(rs) > max {
			t.Errorf("%d results for limit %d", len(rs), limit)
		}
		for i := 1; i < len(rs); i++ {
			if rs[i].Score > rs[i-1].Score {
				t.Errorf("results out of order")
			}
		}
	})
}

func TestServers(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff([]string{"calendar", "chat", "forge", "fs", "weather"}, New(testTools, nil).Servers()); diff != "" {
		t.Errorf("Servers (-want +got):\n%s", diff)
	}
	if got := New(nil, nil).Servers(); len(got) != 0 {
		t.Errorf("Servers of an empty index: %v", got)
	}
}

func TestSharedTerms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query, text string
		want        []string
	}{
		{"open a pull request for my branch", "create_pull_request", []string{"pull", "request"}},
		{"what meetings do I have tomorrow", "listMeetings", []string{"meet"}},
		{"what meetings do I have tomorrow", "list_events", nil},
		{"who am i", "whoami", nil},
		{"the files", "the_file", []string{"fil"}}, // (a stop word is no shared word)
	} {
		if diff := cmp.Diff(tc.want, SharedTerms(tc.query, tc.text)); diff != "" {
			t.Errorf("SharedTerms(%q, %q) (-want +got):\n%s", tc.query, tc.text, diff)
		}
	}
}
