package runner

import (
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ration-run/ration/internal/gnu"
)

// GNUExec are GNU parallel's options that change how a job runs, rather
// than what it runs: its niceness, how it is stopped, where its output
// goes, and when it may start. The zero value changes nothing.
type GNUExec struct {
	// Nice, with NiceSet, is the niceness every job starts at (--nice N,
	// as GNU parallel's setpriority: the value itself, not an increment).
	// Linux only (NiceSupported): elsewhere, and outside -20..19, New
	// refuses it. The worker executor ignores it.
	Nice    int
	NiceSet bool
	// TermSeq, when set, is how a job is stopped (--termseq): by its
	// timeout, --halt now, or the run's own stop; it replaces
	// Config.Grace's SIGTERM, Grace, SIGKILL. The process executor on Unix
	// honours it; on Windows, without signals, a stopped job is killed at
	// once, so New refuses it there; the worker executor stops workers its
	// own way.
	TermSeq TermSeq
	// Files is --files: each job's stdout goes to a new file
	// TmpDir/parXXXXX.par, kept, and the file's name (after its --tag) is
	// the job's output; its stderr is discarded, as GNU parallel does.
	// Not with Results, ResultsTable, Compress or Config.DryRun.
	Files bool
	// Compress is --compress: the output a job spills to a temporary file
	// (past Config.SpillBytes) is written deflated and inflated when it is
	// printed; the output itself is unchanged.
	Compress bool
	// TmpDir is where --files' files go ("": os.TempDir(), so TMPDIR).
	TmpDir string
	// ResultsTable, when set, is the path of --results NAME.csv or
	// NAME.tsv (a tab-separated one): each job's row is written there
	// when it ends (see tableRow), and its output nowhere else. GNU's
	// Results must be "" (New refuses both).
	ResultsTable string
	// Gate holds job starts while the machine is busy (--load, --noswap,
	// --memfree); see StartGate.
	Gate StartGate
	// Parset, when set, makes each job's output a value for GNU's parset
	// shell function to assign (--_parset); see gnu.Parset. It needs
	// Config.KeepOrder and at least one name, and no Files, Results,
	// ResultsTable or Config.DryRun.
	Parset *gnu.Parset
	// SlotVar is the name of the environment variable that holds a job's
	// slot less one (--process-slot-var; "": DefaultSlotVar, as GNU
	// parallel sets it without the option). The process executor sets it.
	SlotVar string
	// Workdir, when set, is the directory every job runs in (--workdir):
	// made with its parents when missing, as GNU parallel makes it, before
	// each attempt; replacement strings make one per job. A directory that
	// cannot be made fails the attempt, which does not run. The worker
	// executor ignores it.
	Workdir string
}

// DefaultSlotVar is the variable GNU parallel 20221122 sets to a job's
// slot less one when --process-slot-var is not given.
const DefaultSlotVar = "PARALLEL_JOBSLOT0"

// AttemptExec is what an Executor needs of GNUExec for one attempt.
type AttemptExec struct {
	// Nice, with NiceSet, is the niceness the job starts at: the
	// ProcessExecutor forks it from a thread of that niceness (Linux).
	Nice    int
	NiceSet bool
	// TermSeq, when set, replaces SIGTERM, Grace, SIGKILL when the job is
	// stopped (see TermSeq).
	TermSeq TermSeq
	// SlotVar names the variable of the job's environment that holds its
	// slot less one (GNUExec.SlotVar); "": DefaultSlotVar.
	SlotVar string
	// Dir is the directory the job runs in ("": ration's); the runner
	// made it (GNUExec.Workdir).
	Dir string
}

// TermStep is one step of a termination sequence: send Signal to the
// job's process group, then wait up to Wait for the job to end.
type TermStep struct {
	Signal syscall.Signal
	Wait   time.Duration
}

// TermSeq is GNU parallel's --termseq: the signals a stopped job gets, in
// order, each followed by the longest wait for the job to end before the
// next one. A job still running after the last step is killed (SIGKILL),
// whatever the last signal was, so a stopped job always ends. Empty: the
// runner's default, SIGTERM, Grace, SIGKILL.
type TermSeq []TermStep

// termSeq is the sequence a stopped attempt gets: its own, else SIGTERM,
// grace, SIGKILL.
func (a *Attempt) termSeq() TermSeq {
	if len(a.TermSeq) > 0 {
		return a.TermSeq
	}
	grace := a.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	return TermSeq{{Signal: syscall.SIGTERM, Wait: grace}, {Signal: syscall.SIGKILL}}
}

// Total is the longest a job stopped by q takes to end: the sum of its
// waits.
func (q TermSeq) Total() time.Duration {
	var t time.Duration
	for _, s := range q {
		t += s.Wait
	}
	return t
}

// String is q as --termseq takes it: TERM,200,KILL,25.
func (q TermSeq) String() string {
	parts := make([]string, 0, 2*len(q))
	for _, s := range q {
		parts = append(parts, signalName(s.Signal), strconv.FormatInt(s.Wait.Milliseconds(), 10))
	}
	return strings.Join(parts, ",")
}

// attempt is what an attempt's executor needs of x.
func (x *GNUExec) attempt() AttemptExec {
	return AttemptExec{Nice: x.Nice, NiceSet: x.NiceSet, TermSeq: x.TermSeq, SlotVar: x.SlotVar}
}
