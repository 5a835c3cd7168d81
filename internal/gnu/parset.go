package gnu

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ration-run/ration/internal/template"
)

// Parset is GNU parallel's --_parset, what the parset shell function of
// GNU's env_parallel.bash runs (`parallel -k --_parset var,NAMES ...`) and
// evals: each job's stdout, less one trailing newline, becomes a
// shell-quoted value for bash to assign, in job order (the run must keep
// the input's order, -k). The caller writes what surrounds the values:
// Header before the run, Footer after it.
type Parset struct {
	// Assoc makes the values an associative array Names[0], keyed by each
	// job's arguments joined by spaces (assoc,NAME).
	Assoc bool
	// Names are the variables (var,NAMES): one name makes an indexed
	// array of every job's value; several give job N's value to the Nth.
	Names []string

	unnamed atomic.Int64 // jobs beyond Names, when there are several
}

// Header is what goes before the first value: the opening of the array.
func (p *Parset) Header() string {
	if p.Assoc || len(p.Names) == 1 {
		return p.Names[0] + "=("
	}
	return ""
}

// Footer is what goes after the run that ended with exit status code: the
// array's end, and the exit status for the eval'ing function to return,
// as GNU parallel writes them.
func (p *Parset) Footer(code int) string {
	end := ""
	if p.Assoc || len(p.Names) == 1 {
		end = ")\n"
	}
	return end + "\nreturn " + strconv.Itoa(code)
}

// Unnamed is the number of jobs whose value had no variable: more jobs
// than Names (several). GNU parallel's parset calls that an error.
func (p *Parset) Unnamed() int64 { return p.unnamed.Load() }

// Value is the line that assigns job seq (1-based) with arguments fields
// its stdout out.
func (p *Parset) Value(seq int64, fields []string, out []byte) string {
	v := template.Quote(strings.TrimSuffix(string(out), "\n"))
	switch {
	case p.Assoc:
		return "[" + template.Quote(strings.Join(fields, " ")) + "]=" + v + "\n"
	case len(p.Names) == 1:
		return v + "\n"
	case seq <= int64(len(p.Names)):
		return p.Names[seq-1] + "=" + v + "\n"
	}
	p.unnamed.Add(1)
	return ""
}
