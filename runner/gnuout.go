package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/input"
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
		stdout, stderr = &tagWriter{w: stdout, tag: tag}, &tagWriter{w: stderr, tag: tag}
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

// tagWriter puts tag before every line written through it, the last
// line included when it has no newline. As GNU parallel's, a line ends at
// \n or \r (so what a progress display redraws after \r keeps the tag,
// and a \r\n gets one before the \n).
type tagWriter struct {
	mu     sync.Mutex
	w      io.Writer
	tag    []byte
	inLine bool
}

func (t *tagWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b bytes.Buffer
	for rest := p; len(rest) > 0; {
		if !t.inLine {
			b.Write(t.tag)
			t.inLine = true
		}
		i := bytes.IndexAny(rest, "\n\r")
		if i < 0 {
			b.Write(rest)
			break
		}
		b.Write(rest[:i+1])
		rest = rest[i+1:]
		t.inLine = false
	}
	if _, err := t.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// resultsDir is the directory of a job's --results files, as GNU parallel
// names it: for every field of every argument, the source's number (or its
// --header name) and the value, with \ / tab and NUL escaped. As GNU
// parallel, the fields of each argument come in the order of their names,
// numerically first, then by bytes (headerOrder): with --header the
// names need not be in column order.
func resultsDir(root string, args []input.Arg, names []string) string {
	parts := []string{root}
	for _, a := range args {
		type pair struct{ name, v string }
		pairs := make([]pair, len(a))
		for i, v := range a {
			name := strconv.Itoa(i + 1)
			if i < len(names) && names[i] != "" {
				name = names[i]
			}
			v = strings.ReplaceAll(v, `\`, `\\`)
			v = strings.ReplaceAll(v, "\t", `\t`)
			v = strings.ReplaceAll(v, "\x00", `\0`)
			v = strings.ReplaceAll(v, "/", `\_`)
			pairs[i] = pair{name, v}
		}
		slices.SortStableFunc(pairs, func(x, y pair) int { return headerOrder(x.name, y.name) })
		for _, p := range pairs {
			parts = append(parts, p.name, p.v)
		}
	}
	return filepath.Join(parts...)
}

// perlNumber is the leading number of a string, as Perl reads one where a
// number is expected ("10x" is 10, "abc" 0, "inf" +Inf, "nan" NaN).
var perlNumber = regexp.MustCompile(`^[ \t\n\r\f\v]*([+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf(?:inity)?|nan)))`)

// headerOrder compares two --results names as GNU parallel sorts its
// headers: numerically (Perl's <=>), then, when equal or not comparable
// (NaN), by bytes (cmp).
func headerOrder(a, b string) int {
	num := func(s string) float64 {
		m := perlNumber.FindStringSubmatch(s)
		if m == nil {
			return 0
		}
		f, _ := strconv.ParseFloat(m[1], 64) // a syntax the pattern took; too big is ±Inf, as in Perl
		return f
	}
	x, y := num(a), num(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return strings.Compare(a, b)
}

// openResults makes the job's --results directory and opens its stdout
// and stderr files, truncated, and writes its seq file.
func openResults(root string, it item, names []string) ([2]*os.File, error) {
	args := it.args
	if args == nil {
		args = []input.Arg{{it.input}}
	}
	dir := resultsDir(root, args, names)
	return createResults(dir, [3]string{filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr"), filepath.Join(dir, "seq")}, it.seq)
}

// createResults makes dir, writes the job number seq into paths[2] (no
// newline, as GNU parallel) and creates paths[0] and paths[1], truncated,
// for the job's stdout and stderr.
func createResults(dir string, paths [3]string, seq int64) ([2]*os.File, error) {
	var files [2]*os.File
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return files, err
	}
	if err := os.WriteFile(paths[2], []byte(strconv.FormatInt(seq, 10)), 0o644); err != nil {
		return files, err
	}
	for i := range 2 {
		f, err := os.Create(paths[i])
		if err != nil {
			if i == 1 {
				files[0].Close()
			}
			return files, err
		}
		files[i] = f
	}
	return files, nil
}
