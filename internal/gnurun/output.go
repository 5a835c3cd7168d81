package gnurun

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/internal/template"
)

// attemptWriters returns the writers of one attempt of j: its output
// stream, tagged (--tag, --tagstring), sent to files (--results), and
// after its command (-v) as the GNU options say. done closes the files.
// A non-nil err says the files of --results or --files could not be
// made: the attempt must not run, and fails with err (its output would
// have nowhere to go that the user asked for), as in GNU parallel; the
// writers are then the job's stream, for the message.
func (r *state) attemptWriters(j runhook.Job) (stdout, stderr io.Writer, done func(), err error) {
	g := &r.g
	stdout, stderr = j.Stream(false), j.Stream(true)
	done = func() {}
	if g.Exec.ResultsTable != "" {
		stdout, stderr = r.tableWriters(j)
	}
	if g.Results != "" {
		files, err := r.resultsFiles(j.Item(), j.Slot())
		if err != nil {
			return stdout, stderr, done, fmt.Errorf("--results: %w", err)
		}
		stdout, stderr = files[0], files[1]
		done = func() { files[0].Close(); files[1].Close() }
	} else if g.Exec.Files {
		if stdout, stderr, done, err = r.filesWriters(j, stdout); err != nil {
			return stdout, stderr, done, err
		}
	} else if g.Exec.Parset != nil {
		stdout, done = r.parsetWriters(j, stdout)
	} else if tag, ok := r.tagOf(j.Item(), j.Slot()); ok {
		stdout, stderr = &gnu.TagWriter{W: stdout, Tag: tag}, &gnu.TagWriter{W: stderr, Tag: tag}
	}
	// Receive counts what the job writes (and -v's command), before any
	// --tag, as GNU parallel: its stdout, with --line-buffer its stderr
	// too, with -u nothing.
	if !g.Ungroup {
		stdout = j.Count(stdout)
		if r.e.LineBuffer {
			stderr = j.Count(stderr)
		}
	}
	if g.Verbose {
		fmt.Fprintln(stdout, r.displayOf(j.Item(), j.Slot()))
	}
	if g.VerboseStderr {
		fmt.Fprintln(stderr, r.displayOf(j.Item(), j.Slot()))
	}
	return stdout, stderr, done, nil
}

// tag is the prefix of the job's lines: --tagstring expanded, else the
// arguments separated by spaces, then a tab.
func (r *state) tagOf(it runhook.Item, slot int) ([]byte, bool) {
	g := &r.g
	switch {
	case g.TagString != "" && r.tag == nil:
		return []byte(g.TagString + "\t"), true
	case g.TagString != "":
		return []byte(strings.Join(r.tag.ExpandFields(it.FieldList(), it.Seq, slot), " ") + "\t"), true
	case g.Tag:
		return []byte(strings.Join(it.FieldList(), " ") + "\t"), true
	}
	return nil, false
}

// parseTag parses --tagstring as a template of one word; nil when it holds
// no replacement string (it is then literal text).
func parseTag(g *GNU) (*template.Template, error) {
	if g.TagString == "" {
		return nil, nil
	}
	o := g.Template
	o.Shell, o.Context = false, false
	t, err := template.ParseOptions([]string{g.TagString}, o)
	if err != nil {
		return nil, fmt.Errorf("runner: TagString: %w", err)
	}
	if !t.HasInput() {
		return nil, nil
	}
	return t, nil
}

// openResults makes the job's --results directory and opens its stdout
// and stderr files, truncated, and writes its seq file.
func openResults(root string, it runhook.Item, names []string) ([2]*os.File, error) {
	args := make([]gnuinput.Arg, 0, max(len(it.Args), 1))
	for _, a := range it.Args {
		args = append(args, a)
	}
	if it.Args == nil {
		args = append(args, gnuinput.Arg{it.Input})
	}
	dir := gnu.ResultsDir(root, args, names)
	return gnu.CreateResults(dir, [3]string{filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr"), filepath.Join(dir, "seq")}, it.Seq)
}

// displayOf is the command of the job of it in slot as a shell reads it
// (-v's line).
func (r *state) displayOf(it runhook.Item, slot int) string {
	if r.g.InputIsCommand {
		return r.display(it, slot)
	}
	return r.e.Template.DisplayFields(it.FieldList(), it.Seq, slot)
}
