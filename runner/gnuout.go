package runner

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/internal/template"
)

// attemptWriters returns the writers of one attempt of j: its output
// stream, tagged (--tag, --tagstring), sent to files (--results), and
// after its command (-v) as the GNU options say. done closes the files.
// A non-nil err says the files of --results or --files could not be
// made: the attempt must not run, and fails with err (its output would
// have nowhere to go that the user asked for), as in GNU parallel; the
// writers are then the job's stream, for the message.
func (r *Runner) attemptWriters(j *job) (stdout, stderr io.Writer, done func(), err error) {
	g := &r.cfg.GNU
	stdout, stderr = streamWriter{o: j.out}, streamWriter{o: j.out, stderr: true}
	done = func() {}
	if g.Exec.ResultsTable != "" {
		stdout, stderr = r.tableWriters(j)
	}
	if g.Results != "" {
		files, err := r.resultsFiles(j.it, j.slot)
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
	} else if tag, ok := r.tag(j.it, j.slot); ok {
		stdout, stderr = &gnu.TagWriter{W: stdout, Tag: tag}, &gnu.TagWriter{W: stderr, Tag: tag}
	}
	// Receive counts what the job writes (and -v's command), before any
	// --tag, as GNU parallel: its stdout, with --line-buffer its stderr
	// too, with -u nothing.
	if !g.Ungroup {
		stdout = receiveWriter{w: stdout, o: j.out}
		if r.cfg.LineBuffer {
			stderr = receiveWriter{w: stderr, o: j.out}
		}
	}
	if g.Verbose {
		fmt.Fprintln(stdout, r.displayOf(j.it, j.slot))
	}
	if g.VerboseStderr {
		fmt.Fprintln(stderr, r.displayOf(j.it, j.slot))
	}
	return stdout, stderr, done, nil
}

// tag is the prefix of the job's lines: --tagstring expanded, else the
// arguments separated by spaces, then a tab.
func (r *Runner) tag(it item, slot int) ([]byte, bool) {
	g := &r.cfg.GNU
	switch {
	case g.TagString != "" && r.gnu.tag == nil:
		return []byte(g.TagString + "\t"), true
	case g.TagString != "":
		return []byte(strings.Join(r.gnu.tag.ExpandFields(it.fieldList(), it.seq, slot), " ") + "\t"), true
	case g.Tag:
		return []byte(strings.Join(it.fieldList(), " ") + "\t"), true
	}
	return nil, false
}

// parseTag parses --tagstring as a template of one word; nil when it holds
// no replacement string (it is then literal text).
func parseTag(cfg *Config) (*template.Template, error) {
	if cfg.GNU.TagString == "" {
		return nil, nil
	}
	o := cfg.GNU.Template
	o.Shell, o.Context = false, false
	t, err := template.ParseOptions([]string{cfg.GNU.TagString}, o)
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
func openResults(root string, it item, names []string) ([2]*os.File, error) {
	args := it.args
	if args == nil {
		args = []gnuinput.Arg{{it.input}}
	}
	dir := gnu.ResultsDir(root, args, names)
	return gnu.CreateResults(dir, [3]string{filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr"), filepath.Join(dir, "seq")}, it.seq)
}
