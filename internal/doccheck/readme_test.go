package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeMaxLines is how long README.md may be: it leads each kind of user
// to a quick start and to the page of docs/ they need; the details live in
// docs/.
const readmeMaxLines = 300

// readmeCommands are commands README.md must show, each inside a fenced
// block, with the section whose block holds it and whether the block must
// be runnable (run by TestRunnableBlocks).
var readmeCommands = []struct {
	section, command string
	runnable         bool
}{
	{"## Quick start: in a shell", "go run ./cmd/ration run --files '**/*.go' -- gofmt -l", true},
	{"## Quick start: in a Go service", "go run ./hello", true},
	{"## Quick start: on Kubernetes", "helm install", false},
	{"## Development", "make test ", false},
}

// TestReadmeLeadsToDocs: README.md stays short, keeps its quick starts and
// the commands that run the main job and the tests, and links to every
// page of docs/.
func TestReadmeLeadsToDocs(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if n := strings.Count(readme, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the details to docs/", n, readmeMaxLines)
	}
	runnable, err := blocks("README.md", readme)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range readmeCommands {
		sec := section(readme, c.section)
		if sec == "" {
			t.Errorf("README.md has no section %q", c.section)
			continue
		}
		if !strings.Contains(sec, "```sh\n") || !strings.Contains(sec, c.command) {
			t.Errorf("README.md's %q shows no sh block with %q", c.section, c.command)
			continue
		}
		if !c.runnable {
			continue
		}
		found := false
		for _, b := range runnable {
			found = found || strings.Contains(b.text, c.command) && strings.Contains(sec, b.text)
		}
		if !found {
			t.Errorf("README.md's %q: the block with %q is not marked runnable", c.section, c.command)
		}
	}
	for _, h := range []string{"### Test lanes", "### Packages and their arrows"} {
		if section(readme, h) == "" {
			t.Errorf("README.md has no section %q", h)
		}
	}
	pages, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if len(pages) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, p := range pages {
		rel := "docs/" + filepath.Base(p)
		if !strings.Contains(readme, "]("+rel+")") {
			t.Errorf("README.md does not link to %s", rel)
		}
	}
}

// section returns the text of the Markdown section that starts with the
// heading line h, up to the next heading of the same or a higher level,
// or "" when there is none. Lines inside fenced blocks are not headings.
func section(text, h string) string {
	level := strings.Index(h, " ")
	lines := strings.SplitAfter(text, "\n")
	start, fenced := -1, false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if fenced {
			continue
		}
		if start < 0 {
			if strings.TrimRight(l, "\n") == h {
				start = i
			}
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, "#")); n > 0 && n <= level && strings.HasPrefix(l[n:], " ") {
			return strings.Join(lines[start:i], "")
		}
	}
	if start < 0 {
		return ""
	}
	return strings.Join(lines[start:], "")
}

func TestSection(t *testing.T) {
	text := "# t\n## a\nx\n```sh\n# not a heading\n```\n### a1\ny\n## b\nz\n"
	if got, want := section(text, "## a"), "## a\nx\n```sh\n# not a heading\n```\n### a1\ny\n"; got != want {
		t.Errorf("section a = %q, want %q", got, want)
	}
	if got, want := section(text, "### a1"), "### a1\ny\n"; got != want {
		t.Errorf("section a1 = %q, want %q", got, want)
	}
	if got, want := section(text, "## b"), "## b\nz\n"; got != want {
		t.Errorf("section b = %q, want %q", got, want)
	}
	if got := section(text, "## c"); got != "" {
		t.Errorf("section c = %q, want none", got)
	}
}

// mdLink is an inline Markdown link or image: its target, without a title.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve: every relative link of README.md and docs/*.md
// names a file of the repository, and every #anchor a heading of the page
// it points to, so that moving a section from one page to another cannot
// leave a link behind.
func TestDocLinksResolve(t *testing.T) {
	root := repoRoot(t)
	docs := docFiles(t, root)
	anchors := map[string]map[string]bool{}
	for _, d := range docs {
		anchors[d.rel] = headingAnchors(d.text)
	}
	for _, d := range docs {
		for _, m := range mdLink.FindAllStringSubmatch(d.text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			rel := d.rel
			if file != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(d.rel), file))
				if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
					t.Errorf("%s: link %q: %v", d.rel, target, err)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			as, ok := anchors[rel]
			if !ok {
				t.Errorf("%s: link %q: an anchor into %s, which is not a checked page", d.rel, target, rel)
			} else if !as[anchor] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", d.rel, target, rel, anchor)
			}
		}
	}
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown page: lowercased, punctuation but '-' and '_' dropped, spaces
// turned into '-'.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		h := strings.TrimLeft(l, "#")
		if fenced || h == l || !strings.HasPrefix(h, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# Running commands: `ration run`\n```\n# not\n```\n## \"per-job overhead\"\n### Exit statuses and the Job controller\n")
	for _, want := range []string{"running-commands-ration-run", "per-job-overhead", "exit-statuses-and-the-job-controller"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not"] {
		t.Errorf("a line inside a fenced block made an anchor: %v", got)
	}
}
