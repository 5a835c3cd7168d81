package gnurun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/internal/template"
)

// parseWorkdir parses GNUExec.Workdir as a template of one word; nil when
// it holds no replacement string (it is then one directory for every
// job).
func parseWorkdir(g *GNU) (*template.Template, error) {
	if g.Exec.Workdir == "" {
		return nil, nil
	}
	o := g.Template
	o.Shell, o.Context = false, false
	t, err := template.ParseOptions([]string{g.Exec.Workdir}, o)
	if err != nil {
		return nil, fmt.Errorf("runner: Workdir: %w", err)
	}
	if !t.HasInput() {
		return nil, nil
	}
	return t, nil
}

// jobWorkdir returns the directory the job of j runs in: GNUExec.Workdir
// with the job's replacement strings, made absolute and made first with
// its parents if missing, as GNU parallel's --workdir does; "" for
// ration's own. Its error says why the job cannot run there.
func (r *state) jobWorkdir(j runhook.Job) (string, error) {
	wd := r.g.Exec.Workdir
	if wd == "" {
		return "", nil
	}
	if t := r.workdir; t != nil {
		wd = strings.Join(t.ExpandFields(j.Item().FieldList(), j.Item().Seq, j.Slot()), " ")
	}
	if wd == "" {
		return "", fmt.Errorf("--workdir %s: the directory of job %d is empty", r.g.Exec.Workdir, j.Item().Seq)
	}
	dir, err := filepath.Abs(wd)
	if err == nil {
		err = os.MkdirAll(dir, 0o777)
	}
	if err != nil {
		return "", fmt.Errorf("--workdir %s: %w", wd, err)
	}
	return dir, nil
}
