package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ration-run/ration/internal/template"
)

// parseWorkdir parses GNUExec.Workdir as a template of one word; nil when
// it holds no replacement string (it is then one directory for every
// job).
func parseWorkdir(cfg *Config) (*template.Template, error) {
	if cfg.GNU.Exec.Workdir == "" {
		return nil, nil
	}
	o := cfg.GNU.Template
	o.Shell, o.Context = false, false
	t, err := template.ParseOptions([]string{cfg.GNU.Exec.Workdir}, o)
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
func (r *Runner) jobWorkdir(j *job) (string, error) {
	wd := r.cfg.GNU.Exec.Workdir
	if wd == "" {
		return "", nil
	}
	if t := r.gnu.workdir; t != nil {
		wd = strings.Join(t.ExpandFields(j.it.fieldList(), j.it.seq, j.slot), " ")
	}
	if wd == "" {
		return "", fmt.Errorf("--workdir %s: the directory of job %d is empty", r.cfg.GNU.Exec.Workdir, j.it.seq)
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

// programPath is the path of a's program: argv[0] looked up in PATH (once
// per name), or, for a relative path with a slash run in a.Dir, that path
// in a.Dir, as a shell that changed into a.Dir would find it.
func (e *ProcessExecutor) programPath(a *Attempt) (string, error) {
	name := a.Argv[0]
	if a.Dir != "" && !filepath.IsAbs(name) && strings.ContainsAny(name, "/"+string(os.PathSeparator)) {
		return exec.LookPath(filepath.Join(a.Dir, name))
	}
	return e.lookPath(name)
}
