//go:build unix

package runcmd

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var compatUpdate = flag.Bool("update-compat", false, "TestCompatListsExamples: rewrite the example lists at the end of "+compatDoc)

const compatDoc = "../../../../docs/compat.md"

// compatExamplesStart begins the part of docs/compat.md that
// compatExamples writes: from there to the end of the file.
const compatExamplesStart = "Of the "

// compatExamples is the end of docs/compat.md: how many of the man pages'
// examples TestGNUExamples runs and how, and the examples it adapts, lets
// differ by timing, or leaves out, each with its reason, as
// testdata/gnu_examples.txt classifies them.
func compatExamples(exs []gnuExample) string {
	var asIs, adapted, timing []gnuExample
	type group struct {
		reason string
		where  []string
	}
	var skipped []*group
	byReason := map[string]*group{}
	for _, ex := range exs {
		kind, why, _ := strings.Cut(ex.status, " ")
		switch kind {
		case "run":
			asIs = append(asIs, ex)
		case "adapted":
			adapted = append(adapted, ex)
		case "timing":
			timing = append(timing, ex)
		default:
			g := byReason[why]
			if g == nil {
				g = &group{reason: why}
				byReason[why] = g
				skipped = append(skipped, g)
			}
			g.where = append(g.where, "`"+ex.where+"`")
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s%d example blocks that run `parallel`, the test runs %d: %d must give GNU parallel's stdout and exit status exactly (sorted where GNU's order is not defined; %d as the man page has them, %d adapted as listed below), and %d are run but may differ, only by timing (the test logs the difference):\n\n",
		compatExamplesStart, len(exs), len(asIs)+len(adapted)+len(timing), len(asIs)+len(adapted), len(asIs), len(adapted), len(timing))
	list := func(exs []gnuExample) {
		for _, ex := range exs {
			_, why, _ := strings.Cut(ex.status, " ")
			fmt.Fprintf(&b, "- `%s`: %s\n", ex.where, why)
		}
	}
	list(timing)
	b.WriteString("\nAdapted (the script in `cmd/ration/internal/runcmd/testdata/gnu_examples.txt` is the man page's with this change; GNU parallel's result is recorded for the adapted script). The programs the examples run that are not installed or need the network are stood in for by fakes first on PATH for both GNU parallel and ration (`gnuFakes` in the test): each one's output, or the file it writes, is a function of its arguments only, so the comparison checks what every job was given, which is what the examples are about:\n\n")
	list(adapted)
	b.WriteString("\nLeft out, by reason (an example is named by the line of its block in `man parallel_tutorial | col -b` or `man parallel_examples | col -b`; the blocks and their classification are in `cmd/ration/internal/runcmd/testdata/gnu_examples.txt`):\n\n")
	for _, g := range skipped {
		fmt.Fprintf(&b, "- %s (%d): %s\n", g.reason, len(g.where), strings.Join(g.where, ", "))
	}
	return b.String()
}

// TestCompatListsExamples: docs/compat.md's account of the man pages'
// examples is what testdata/gnu_examples.txt says, so the counts and
// reasons it publishes cannot drift from what TestGNUExamples runs
// (-update-compat rewrites it).
func TestCompatListsExamples(t *testing.T) {
	data, err := os.ReadFile(compatDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.LastIndex(doc, "\n"+compatExamplesStart)
	if i < 0 {
		t.Fatalf("%s has no line starting with %q", compatDoc, compatExamplesStart)
	}
	want := compatExamples(readGNUExamples(t))
	if *compatUpdate {
		if err := os.WriteFile(compatDoc, []byte(doc[:i+1]+want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := doc[i+1:]; got != want {
		t.Errorf("%s's example lists differ from testdata/gnu_examples.txt; rewrite them with go test ./cmd/ration/internal/runcmd -run TestCompatListsExamples -update-compat\ngot:\n%s\nwant:\n%s", compatDoc, got, want)
	}
}
