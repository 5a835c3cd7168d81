package runcmd

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/ration-run/ration/runner"
)

// joblogFlags are the flags of the joblog and of resuming from it.
type joblogFlags struct {
	joblog       string
	resume       bool
	resumeFailed bool
	resumeAny    bool
}

// addJoblogFlags adds joblogFlags' flags to fs.
func addJoblogFlags(fs *pflag.FlagSet, g *joblogFlags) {
	fs.StringVar(&g.joblog, "joblog", "", "write GNU parallel's joblog to `FILE`")
	fs.BoolVar(&g.resume, "resume", false, "skip the jobs the joblog records")
	fs.BoolVar(&g.resumeFailed, "resume-failed", false, "skip the jobs the joblog records as succeeded (re-run failed ones)")
	fs.BoolVar(&g.resumeAny, "resume-any-command", false, "with --resume or --resume-failed: resume a joblog written by another command instead of refusing it (its records match none of this command's jobs)")
}

// planJoblog sets the joblog and --resume: GNU parallel's --joblog +FILE
// appends to FILE, and --joblog - is stdout, which cannot be resumed.
func planJoblog(c *runner.Config, f *runFlags) error {
	if (f.resume || f.resumeFailed) && f.joblog == "" {
		return flagMsg("--resume", "--resume and --resume-failed need --joblog")
	}
	if f.resumeAny && !f.resume && !f.resumeFailed {
		return flagMsg("--resume-any-command", "--resume-any-command needs --resume or --resume-failed")
	}
	c.Joblog, c.Resume, c.ResumeFailed, c.ResumeAnyCommand = f.joblog, f.resume, f.resumeFailed, f.resumeAny
	if name, ok := strings.CutPrefix(f.joblog, "+"); ok && name != "" {
		c.Joblog, c.JoblogAppend = name, true
	}
	if c.Joblog == "-" && (c.Resume || c.ResumeFailed) {
		return flagMsg("--resume", "--resume and --resume-failed need a --joblog file to read, not - (standard output)")
	}
	return nil
}
