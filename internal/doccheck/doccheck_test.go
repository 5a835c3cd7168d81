package doccheck

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// marker is the line that makes the next shell block runnable.
const marker = "<!-- runnable -->"

// block is one marked fenced block.
type block struct {
	file string // relative to the repository root
	line int    // of the opening fence
	info string // the fence's info string
	text string
}

// blocks returns the runnable blocks of the Markdown text.
func blocks(file, text string) ([]block, error) {
	bs, err := markedBlocks(file, text, marker)
	for _, b := range bs {
		if b.info != "sh" && b.info != "bash" {
			return nil, fmt.Errorf("%s:%d: runnable block is %q, want sh or bash", file, b.line, b.info)
		}
	}
	return bs, err
}

// markedBlocks returns the fenced blocks of the Markdown text whose
// opening fence follows the line mark (blank lines between allowed).
func markedBlocks(file, text, mark string) ([]block, error) {
	var out []block
	sc := bufio.NewScanner(strings.NewReader(text))
	n, marked := 0, false
	for sc.Scan() {
		n++
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == mark:
			marked = true
		case l == "" && marked:
		case strings.HasPrefix(l, "```"):
			info := strings.TrimSpace(strings.TrimPrefix(l, "```"))
			start := n
			var body []string
			closed := false
			for sc.Scan() {
				n++
				if strings.TrimSpace(sc.Text()) == "```" {
					closed = true
					break
				}
				body = append(body, sc.Text())
			}
			if !closed {
				return nil, fmt.Errorf("%s:%d: unclosed fence", file, start)
			}
			if marked {
				out = append(out, block{file, start, info, strings.Join(body, "\n") + "\n"})
			}
			marked = false
		default:
			if marked {
				return nil, fmt.Errorf("%s:%d: %s not followed by a fenced block", file, n, mark)
			}
		}
	}
	return out, sc.Err()
}

func TestBlocks(t *testing.T) {
	got, err := blocks("x.md", "a\n<!-- runnable -->\n\n```sh\necho 1\necho 2\n```\n```sh\nnot marked\n```\n<!-- runnable -->\n```bash\nls\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].line != 4 || got[0].text != "echo 1\necho 2\n" || got[1].line != 12 || got[1].text != "ls\n" || got[1].info != "bash" {
		t.Errorf("blocks = %+v", got)
	}
	for _, bad := range []string{"<!-- runnable -->\ntext\n", "<!-- runnable -->\n```go\nx\n```\n", "```sh\nno end\n"} {
		if _, err := blocks("x.md", bad); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// repoRoot is the repository's root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// copyRepo copies the files git would commit (or, without git, all but
// .git) from root into a new temporary directory.
func copyRepo(t *testing.T, root string) string {
	t.Helper()
	dst := t.TempDir()
	var files []string
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		files = strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	} else {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		p := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// rationDir builds ration from this checkout into a new directory and
// returns the directory, to be put first on PATH.
func rationDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := testutil.BuildRation(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// doc is one Markdown file of the documentation.
type doc struct {
	rel  string // path relative to the repository root
	text string
}

// docFiles returns README.md and docs/*.md below root.
func docFiles(t *testing.T, root string) []doc {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	paths = append([]string{filepath.Join(root, "README.md")}, paths...)
	var out []doc
	for _, p := range paths {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, doc{rel, string(text)})
	}
	return out
}

// TestRunnableBlocks runs every runnable block of README.md and docs/*.md.
func TestRunnableBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ration and runs the documentation's commands")
	}
	root := repoRoot(t)
	var all []block
	for _, d := range docFiles(t, root) {
		bs, err := blocks(d.rel, d.text)
		if err != nil {
			t.Error(err)
		}
		all = append(all, bs...)
	}
	if len(all) == 0 {
		t.Skip("no runnable blocks")
	}
	binDir := rationDir(t)
	for _, b := range all {
		t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
			dir := copyRepo(t, root)
			// A block that runs `go run` compiles the checkout's packages
			// afresh in its copy (the build cache keys them by directory):
			// seconds on a quiet machine, more than 30 on a loaded one.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-e", "-c", b.text)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s:%d: block failed: %v\n--- block\n%s--- output\n%s", b.file, b.line, err, b.text, out)
			}
		})
	}
}
