package runcmd

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/gnurun"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/internal/runhook"
	"github.com/ration-run/ration/internal/template"
	"github.com/ration-run/ration/runner/joblog"
)

// gnuExecFlags are GNU parallel's flags that change how jobs run (see
// docs/compat.md): --nice, --termseq, GNU's --files (--output-files),
// --tmpdir, --retry-failed, --load, --noswap, --memfree, --compress.
type gnuExecFlags struct {
	nice        int
	termSeq     string
	outputFiles bool
	tmpDir      string
	retryFailed bool
	load        string
	noSwap      bool
	memFree     string
	// niceSet is whether --nice was given (0 is a niceness of its own).
	niceSet bool
	// compress is --compress (GNU's --compress-program and
	// --decompress-program are refused: gnuUnsupported).
	compress bool
}

// addGNUExecFlags adds GNU parallel's flags that change how jobs run.
func addGNUExecFlags(fs *pflag.FlagSet, f *runFlags) {
	x := &f.exec
	fs.IntVar(&x.nice, "nice", 0, "run every job at niceness `N` (-20..19; as GNU parallel, the value itself, not an increment; Linux only)")
	fs.BoolVar(&x.outputFiles, "output-files", false, "write each job's stdout to a new file in --tmpdir and print the file's name instead; stderr is discarded (GNU parallel's --files is read as this flag when it comes before the command and the ::: :::: -a inputs, when there is no command, and with --pipe or --pipepart)")
	fs.StringVar(&x.tmpDir, "tmpdir", "", "the `DIR` of --output-files' files, of --cat's and --fifo's blocks, and of the output spilled to disk (default: $TMPDIR, else /tmp)")
	fs.BoolVar(&x.retryFailed, "retry-failed", false, "with --joblog FILE and no command or inputs: run again the commands FILE records as failed (GNU parallel's --retry-failed; the succeeded ones are skipped, the new records appended)")
	fs.StringVar(&x.load, "load", "", "start a job only while fewer than `MAX` threads of the machine run or wait for I/O (N, or N% of the CPUs; GNU parallel's instant load); one job starts anyway while none of this run's jobs is running")
	fs.BoolVar(&x.noSwap, "noswap", false, "start a job only while the machine is not swapping (pages both in and out during the last second); one job starts anyway while none of this run's jobs is running")
	fs.StringVar(&x.memFree, "memfree", "", "start a job only while more than `SIZE` bytes are free (MemAvailable, at most the memory cgroup's headroom; K M G: 1024-based, k m g: 1000-based); one job starts anyway while none of this run's jobs is running; below SIZE/2 free the youngest job is stopped and run again")
	fs.BoolVar(&x.compress, "compress", false, "deflate the output a job spills to --tmpdir (past 1 MiB per stream held in memory); it is printed as the job wrote it")
	fs.StringVar(&x.termSeq, "termseq", "", "stop a job (--timeout, --halt now, an interrupt) with this `SEQ` of signals and waits in ms, e.g. TERM,200,TERM,100,KILL,25 (default TERM,2000,KILL; SIGKILL follows the last wait)")
}

// gnuExecParsed sets what parseRunFlags learns from the FlagSet.
func gnuExecParsed(fs *pflag.FlagSet, f *runFlags) {
	f.exec.niceSet = fs.Changed("nice")
}

// planGNUExec checks the flags that change how jobs run: --nice,
// --termseq.
func planGNUExec(p *runPlan, f *runFlags, _ func(string) string) error {
	x, gx := &f.exec, &p.cfg.GNU.Exec
	worker := p.worker.command != ""
	if x.niceSet {
		switch {
		case !runhook.NiceSupported:
			return flagMsg("--nice", fmt.Sprintf("--nice is supported on Linux only (not %s): run nice -n N ration run ...", runtime.GOOS))
		case x.nice < -20 || x.nice > 19:
			return flagErr("--nice", fmt.Errorf("%d is not a niceness (-20..19)", x.nice))
		case worker:
			return flagMsg("--nice", "--nice cannot be combined with --worker: run nice -n N ration run ...")
		}
		gx.Nice, gx.NiceSet = x.nice, true
	}
	if x.outputFiles {
		switch {
		case f.gnu.results != "":
			return flagMsg("--output-files", "--files (--output-files) and --results cannot be combined")
		case f.dryRun:
			return flagMsg("--output-files", "--files (--output-files) and --dry-run cannot be combined")
		}
		gx.Files = true
	}
	if err := planCompress(p, f); err != nil {
		return err
	}
	if err := planResults(p, f); err != nil {
		return err
	}
	if err := planRetryFailed(p, f); err != nil {
		return err
	}
	if err := planGate(p, f); err != nil {
		return err
	}
	if x.tmpDir != "" {
		// Checked by wire (checkGNUExec): plan does no I/O.
		gx.TmpDir, p.cfg.TempDir = x.tmpDir, x.tmpDir
	}
	if x.termSeq != "" {
		if worker {
			return flagMsg("--termseq", "--termseq cannot be combined with --worker (a worker is stopped by closing its stdin, then killed)")
		}
		if runtime.GOOS == "windows" {
			return flagMsg("--termseq", "--termseq is not supported on Windows, where a stopped job is killed at once")
		}
		q, err := flagvalue.ParseTermSeq(x.termSeq)
		if err != nil {
			return flagErr("--termseq", err)
		}
		// One mechanism: the sequence replaces the SIGTERM-grace-SIGKILL
		// of a stopped job, and its waits are the grace the signal
		// handling allows the jobs before it gives up on the run.
		gx.TermSeq, p.cfg.Grace = q, q.Total()
	}
	return nil
}

// gnuFilesArgs returns args with GNU parallel's meaning of a bare --files
// (--output-files) when that is how they read: pflag read them (into fs,
// with the error err) with ration's --files PATTERN, and they hold a
// :::, ::::, :::+ or ::::+ source or an -a file, or no command, or
// --files was the last argument; ration's --files PATTERN takes none of
// these. With --pipe or --pipepart a bare --files is GNU's too
// (pipeFilesArgs): the inputs are then stdin's blocks, never a file set.
// ok is false when args stay as they are.
func gnuFilesArgs(args []string, fs *pflag.FlagSet, err error) (_ []string, ok bool) {
	var flags int
	switch {
	case err != nil && err.Error() == "flag needs an argument: --files":
		flags = len(args)
	case err != nil || !fs.Changed("files"):
		return pipeFilesArgs(args)
	default:
		rest := fs.Args()
		gnu := len(rest) == 0
		if af, _ := fs.GetStringArray("arg-file"); len(af) > 0 {
			gnu = true
		}
		sep, _ := fs.GetString("arg-sep")
		fileSep, _ := fs.GetString("arg-file-sep")
		for _, a := range rest {
			gnu = gnu || a == sep || a == sep+"+" || a == fileSep || a == fileSep+"+"
		}
		if !gnu {
			return pipeFilesArgs(args)
		}
		flags = len(args) - len(rest)
	}
	return filesToOutputFiles(args, flags), true
}

// pipeFilesArgs returns args with every bare --files among the options
// read as GNU parallel's (--output-files) when, so read, they parse and
// give --pipe or --pipepart (or --cat, --fifo); ration's --files PATTERN cannot be combined
// with either. A --files in the command (after the first argument that
// is not an option) stays as it is. ok is false when args stay as they
// are.
func pipeFilesArgs(args []string) (_ []string, ok bool) {
	end := slices.Index(args, "--")
	if end < 0 {
		end = len(args)
	}
	if !slices.Contains(args[:end], "--files") {
		return nil, false
	}
	var f runFlags
	fs := newRunFlagSet(&f)
	all := filesToOutputFiles(args, end)
	// --cat and --fifo imply --pipe.
	if fs.Parse(all) != nil || !(f.gnu.pipe || f.pipe.pipePart || f.pipe.cat || f.pipe.fifo) {
		return nil, false
	}
	// The tokens map one to one, so the options end where they did.
	return filesToOutputFiles(args, len(args)-len(fs.Args())), true
}

// filesToOutputFiles returns a copy of args with each --files among the
// first flags, up to a "--", made --output-files.
func filesToOutputFiles(args []string, flags int) []string {
	out := slices.Clone(args)
	for i := range flags {
		if out[i] == "--" {
			break
		}
		if out[i] == "--files" {
			out[i] = "--output-files"
		}
	}
	return out
}

// execPlan is what wire does for the flags that change how jobs run.
type execPlan struct {
	// retryFailed reads the joblog's commands as the inputs
	// (--retry-failed).
	retryFailed bool
}

// planRetryFailed plans GNU parallel's --retry-failed: the inputs are the
// commands the joblog records (read by wire: retryInputs), each a shell
// command line, numbered by their Seq, and the succeeded ones are skipped
// (--resume-failed). Unlike GNU parallel, which ignores a command and
// inputs given with it, ration refuses them.
func planRetryFailed(p *runPlan, f *runFlags) error {
	if !f.exec.retryFailed {
		return nil
	}
	switch {
	case f.joblog == "":
		return flagMsg("--retry-failed", "--retry-failed needs --joblog FILE (it runs again the commands FILE records as failed)")
	case len(f.args) > 0 || len(f.argFiles) > 0 || len(f.files) > 0:
		return flagMsg("--retry-failed", "--retry-failed runs again the commands the joblog records and takes no command or inputs (GNU parallel ignores them); to run the failed jobs of a command and inputs again, give them with --resume-failed")
	case f.resume:
		return flagMsg("--retry-failed", "--retry-failed and --resume cannot be combined")
	case p.cfg.Shard.Count > 1:
		// The shard would hash the command lines, not the inputs that made
		// it (planShard comes first).
		return flagMsg("--retry-failed", "--retry-failed cannot be combined with --shard or RATION_SHARD_COUNT: "+
			"the joblog holds command lines, not the inputs a shard is made of; run the shard's command and inputs again with --resume-failed")
	}
	p.cfg.ResumeFailed, p.exec.retryFailed = true, true
	return nil
}

// retryInputs makes the inputs of --retry-failed: the Command of the
// joblog's last record of every Seq from 1 to the highest, "true" for a
// Seq it lacks (GNU parallel runs an empty line there). A joblog that
// cannot be read, a malformed line, or a command the joblog cut is an
// error before any job runs.
func retryInputs(p *runPlan) error {
	path := p.cfg.Joblog
	fh, err := os.Open(path)
	if err != nil {
		return flagMsg("--retry-failed", "--retry-failed: --joblog "+path+": "+unwrapPathErr(err).Error())
	}
	defer fh.Close()
	cmds := map[int64]string{}
	var last int64
	for e, err := range joblog.Entries(fh) {
		if errors.Is(err, joblog.ErrTornTail) {
			break // an unfinished last line: the joblog's writer repairs it
		}
		if err != nil {
			return flagMsg("--retry-failed", fmt.Sprintf("--retry-failed: --joblog %s: %v", path, err))
		}
		if strings.HasSuffix(e.Command, " bytes cut]") && strings.Contains(e.Command, "[... ") {
			return flagMsg("--retry-failed", fmt.Sprintf("--retry-failed: --joblog %s: the command of job %d was cut (longer than the joblog's line); it cannot be run again", path, e.Seq))
		}
		cmds[e.Seq] = e.Command
		last = max(last, e.Seq)
	}
	vals := make([]string, last)
	for i := range vals {
		c, ok := cmds[int64(i+1)]
		if !ok {
			c = "true"
		}
		vals[i] = c
	}
	in := &p.input
	in.kind, in.sources, in.total = inputSources, []sourcePlan{{name: "--retry-failed", args: vals}}, -1
	return nil
}

// checkGNUExec does what plan could not without I/O: it checks that
// --tmpdir is a directory, reads --retry-failed's joblog, and finds the
// memory cgroup for --memfree.
func checkGNUExec(p *runPlan) error {
	p.cfg.GNU.Exec.Gate.Memory = gateMemory(p)
	if p.exec.retryFailed {
		if err := retryInputs(p); err != nil {
			return err
		}
	}
	dir := p.cfg.GNU.Exec.TmpDir
	if dir == "" {
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		msg := "not a directory"
		if err != nil {
			msg = unwrapPathErr(err).Error()
		}
		return flagMsg("--tmpdir", "--tmpdir "+dir+": "+strings.TrimSpace(msg))
	}
	return nil
}

// planCompress plans --compress: the runner deflates what a job's output
// spills to disk. --compress with --files is refused: GNU parallel
// compresses the kept files, ration would leave them as they are.
func planCompress(p *runPlan, f *runFlags) error {
	x := &f.exec
	if !x.compress {
		return nil
	}
	if x.outputFiles {
		return flagMsg("--compress", "--compress with --files is not supported: GNU parallel writes the kept files compressed, ration would not")
	}
	p.cfg.GNU.Exec.Compress = true
	return nil
}

// planResults reads --results as GNU parallel does: NAME.csv or NAME.tsv
// is a table of every job (gnurun.GNUExec.ResultsTable), NAME.json is not
// supported, and a name with replacement strings names each job's files
// (checked here; expanded by the runner).
func planResults(p *runPlan, f *runFlags) error {
	name := f.gnu.results
	gc := &p.cfg.GNU
	lower := strings.ToLower(name)
	switch {
	case name == "":
		return nil
	case strings.HasSuffix(lower, ".json"):
		return flagMsg("--results", "--results NAME.json (JSON lines on stdout) is not supported: use --results NAME.csv, or --joblog FILE")
	case strings.HasSuffix(lower, ".csv") || strings.HasSuffix(lower, ".tsv"):
		gc.Results, gc.Exec.ResultsTable = "", name
		return nil
	}
	o := gc.Template
	o.Shell, o.Context = false, false
	if _, err := template.ParseOptions([]string{name}, o); err != nil {
		return flagErr("--results", err)
	}
	return nil
}

// planGate plans GNU parallel's --load, --noswap and --memfree: the
// runner's StartGate (wire adds the memory cgroup's reader).
func planGate(p *runPlan, f *runFlags) error {
	x, g := &f.exec, &p.cfg.GNU.Exec.Gate
	if (x.load != "" || x.noSwap || x.memFree != "") && !gnurun.GateSupported {
		return flagMsg("--load", fmt.Sprintf("--load, --noswap and --memfree read /proc: Linux only (not %s)", runtime.GOOS))
	}
	if x.load != "" {
		v, pct := strings.CutSuffix(strings.TrimSpace(x.load), "%")
		n, err := strconv.ParseFloat(v, 64)
		if err != nil || !(n > 0) || math.IsInf(n, 0) {
			return flagErr("--load", fmt.Errorf("%q is not a number > 0 or a percentage of the CPUs like 100%%", x.load))
		}
		if pct {
			// GNU parallel's N% is per CPU; the load is the machine's.
			n = n / 100 * float64(runtime.NumCPU())
		}
		g.MaxLoad = n
	}
	g.NoSwap = x.noSwap
	if x.memFree != "" {
		n, err := parseGNUSize(x.memFree)
		if err != nil {
			return flagErr("--memfree", err)
		}
		g.MemFree = n
	}
	return nil
}

// parseGNUSize parses a size as GNU parallel's multiply_binary_prefix: a
// number with an optional unit, K M G T P (and Ki Mi ... in any case)
// powers of 1024, k m g t p powers of 1000.
func parseGNUSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if u, ok := strings.CutSuffix(strings.ToLower(t), "i"); ok && len(u) > 0 {
		if i := strings.IndexByte("kmgtp", u[len(u)-1]); i >= 0 {
			mult, t = float64(int64(1)<<(10*(i+1))), t[:len(t)-2]
		}
	} else if t != "" {
		if i := strings.IndexByte("KMGTP", t[len(t)-1]); i >= 0 {
			mult, t = float64(int64(1)<<(10*(i+1))), t[:len(t)-1]
		} else if i := strings.IndexByte("kmgtp", t[len(t)-1]); i >= 0 {
			mult, t = math.Pow(1000, float64(i+1)), t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v*mult >= 1) || v*mult > 1<<62 {
		return 0, fmt.Errorf("%q is not a size like 1G (K, M, G: 1024-based; k, m, g: 1000-based)", s)
	}
	return int64(v * mult), nil
}

// gateMemory is the reader of ration's memory cgroup for --memfree, nil
// when ration is in none with a limit (or reads a --fs-root snapshot).
func gateMemory(p *runPlan) *memory.Sampler {
	if p.cfg.GNU.Exec.Gate.MemFree <= 0 || p.limits.FSRoot != "" {
		return nil
	}
	s, err := memory.NewSampler(cgroup.Reader{})
	if err != nil || !s.Limited() {
		return nil
	}
	return s
}
