package gnurun

import (
	"github.com/ration-run/ration/internal/gnu"
	"github.com/ration-run/ration/internal/runhook"
)

// GNUExec are GNU parallel's options that change how a job runs, rather
// than what it runs: its niceness, how it is stopped, where its output
// goes, and when it may start. The zero value changes nothing.
type GNUExec struct {
	// Nice, with NiceSet, is the niceness every job starts at (--nice N,
	// as GNU parallel's setpriority: the value itself, not an increment).
	// Linux only (runhook.NiceSupported): elsewhere, and outside -20..19,
	// runner.New refuses it. The worker executor ignores it.
	Nice    int
	NiceSet bool
	// TermSeq, when set, is how a job is stopped (--termseq): by its
	// timeout, --halt now, or the run's own stop; it replaces
	// runner.Config.Grace's SIGTERM, Grace, SIGKILL. The process executor
	// on Unix honours it; on Windows, without signals, a stopped job is
	// killed at once, so runner.New refuses it there; the worker executor
	// stops workers its own way.
	TermSeq runhook.TermSeq
	// Files is --files: each job's stdout goes to a new file
	// TmpDir/parXXXXX.par, kept, and the file's name (after its --tag) is
	// the job's output; its stderr is discarded, as GNU parallel does.
	// Not with Results, ResultsTable, Compress or runner.Config.DryRun.
	Files bool
	// Compress is --compress: the output a job spills to a temporary file
	// (past runner.Config.SpillBytes) is written deflated and inflated
	// when it is printed; the output itself is unchanged.
	Compress bool
	// TmpDir is where --files' files go ("": os.TempDir(), so TMPDIR).
	TmpDir string
	// ResultsTable, when set, is the path of --results NAME.csv or
	// NAME.tsv (a tab-separated one): each job's row is written there
	// when it ends (see tableRow), and its output nowhere else. GNU's
	// Results must be "" (runner.New refuses both).
	ResultsTable string
	// Gate holds job starts while the machine is busy (--load, --noswap,
	// --memfree); see StartGate.
	Gate StartGate
	// Parset, when set, makes each job's output a value for GNU's parset
	// shell function to assign (--_parset); see gnu.Parset. It needs
	// runner.Config.KeepOrder and at least one name, and no Files,
	// Results, ResultsTable or runner.Config.DryRun.
	Parset *gnu.Parset
	// SlotVar is the name of the environment variable that holds a job's
	// slot less one (--process-slot-var; "": runner.DefaultSlotVar, as GNU
	// parallel sets it without the option). The process executor sets it.
	SlotVar string
	// Workdir, when set, is the directory every job runs in (--workdir):
	// made with its parents when missing, as GNU parallel makes it, before
	// each attempt; replacement strings make one per job. A directory that
	// cannot be made fails the attempt, which does not run. The worker
	// executor ignores it.
	Workdir string
}
