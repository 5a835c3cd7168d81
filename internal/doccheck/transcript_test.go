package doccheck

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// transcriptMarker is the line that makes the next fenced block a
// transcript: a command and the exact standard output it prints.
const transcriptMarker = "<!-- transcript -->"

// transcript is a marked block split into its command and output.
type transcript struct {
	block
	command string // after "$ " on the block's first line
	want    string // the rest of the block
}

// transcripts returns the transcripts of the Markdown text.
func transcripts(file, text string) ([]transcript, error) {
	bs, err := markedBlocks(file, text, transcriptMarker)
	if err != nil {
		return nil, err
	}
	var out []transcript
	for _, b := range bs {
		first, rest, _ := strings.Cut(b.text, "\n")
		cmd, ok := strings.CutPrefix(first, "$ ")
		if !ok {
			return nil, fmt.Errorf("%s:%d: a transcript starts with \"$ COMMAND\", not %q", file, b.line, first)
		}
		out = append(out, transcript{b, cmd, rest})
	}
	return out, nil
}

func TestTranscriptsParse(t *testing.T) {
	got, err := transcripts("x.md", "<!-- transcript -->\n```\n$ ration limits\na:  1\n\nb\n```\n```\n$ not marked\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].command != "ration limits" || got[0].want != "a:  1\n\nb\n" || got[0].line != 2 {
		t.Errorf("transcripts = %+v", got)
	}
	if _, err := transcripts("x.md", "<!-- transcript -->\n```\nno dollar\n```\n"); err == nil {
		t.Error("no error for a transcript without $")
	}
}

// TestTranscripts runs the command of every transcript of README.md and
// docs/*.md, with the ration built from this checkout, and compares its
// standard output with the documented one byte for byte. A transcript
// must print the same on every machine (a --fs-root snapshot, not the
// live system), so that it cannot fall behind what ration prints: README
// showed a `ration limits` without the lines that were added to it later.
func TestTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ration and runs the documentation's commands")
	}
	root := repoRoot(t)
	var all []transcript
	for _, d := range docFiles(t, root) {
		ts, err := transcripts(d.rel, d.text)
		if err != nil {
			t.Error(err)
		}
		all = append(all, ts...)
	}
	if len(all) == 0 {
		t.Skip("no transcripts")
	}
	binDir := rationDir(t)
	for _, tr := range all {
		t.Run(fmt.Sprintf("%s:%d", tr.file, tr.line), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-e", "-c", tr.command)
			cmd.Dir = root // read-only commands: they run in the checkout itself
			cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "RATION_JOBS=")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s:%d: $ %s: %v\n%s", tr.file, tr.line, tr.command, err, stderr.String())
			}
			if string(out) != tr.want {
				t.Errorf("%s:%d: $ %s prints\n%s--- the documentation shows\n%s", tr.file, tr.line, tr.command, out, tr.want)
			}
		})
	}
}

// jsonFieldRow is a row of the table of `ration limits --json`
// fields: its first cell names one or more fields in backquotes.
var jsonFieldRow = regexp.MustCompile("^\\| (`[a-z_]+`(?:, `[a-z_]+`)*) \\|")

// limitsFieldsDoc is the page with the table of the fields of `ration
// limits --json`, under limitsFieldsHeading.
const (
	limitsFieldsDoc     = "docs/limits.md"
	limitsFieldsHeading = "## JSON fields (`ration limits --json`)"
)

// documentedLimitsFields returns the fields that the table under
// limitsFieldsHeading in doc names.
func documentedLimitsFields(t *testing.T, doc string) []string {
	t.Helper()
	_, table, ok := strings.Cut(doc, "\n"+limitsFieldsHeading+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", limitsFieldsDoc, limitsFieldsHeading)
	}
	var fields []string
	for _, l := range strings.Split(table, "\n")[1:] {
		if strings.HasPrefix(l, "#") {
			break
		}
		if m := jsonFieldRow.FindStringSubmatch(l); m != nil {
			for _, f := range strings.Split(m[1], ", ") {
				fields = append(fields, strings.Trim(f, "`"))
			}
		}
	}
	slices.Sort(fields)
	return fields
}

// TestLimitsJSONFieldsDocumented: docs/limits.md's table of the fields of
// `ration limits --json` names every field ration prints, on this
// machine and for every snapshot under cgroup/testdata, and no field it
// never prints. Before, `jobs_cgroup` was printed and not in the table.
func TestLimitsJSONFieldsDocumented(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ration")
	}
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, limitsFieldsDoc))
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedLimitsFields(t, string(doc))
	bin := filepath.Join(rationDir(t), "ration")
	runs := [][]string{{"limits", "--json", "--mem-per-job", "300MiB"}}
	snaps, _ := filepath.Glob(filepath.Join(root, "cgroup", "testdata", "*", "proc"))
	for _, s := range snaps {
		runs = append(runs, []string{"limits", "--json", "--mem-per-job", "300MiB", "--fs-root", filepath.Dir(s)})
	}
	printed := map[string]bool{}
	for _, args := range runs {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "RATION_JOBS=")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ration %s: %v", strings.Join(args, " "), err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("ration %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		for k := range m {
			printed[k] = true
		}
	}
	for k := range printed {
		if !slices.Contains(documented, k) {
			t.Errorf("ration limits --json prints %q, which %s's JSON fields table does not name", k, limitsFieldsDoc)
		}
	}
	for _, k := range documented {
		if !printed[k] {
			t.Errorf("%s's JSON fields table names %q, which ration limits --json never printed here", limitsFieldsDoc, k)
		}
	}
}
