package runcmd

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/internal/jobcgroup"
	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/runner"
)

// The names this package's files use for what ration's commands share
// (package cli).

const exitUsage = cli.ExitUsage

type (
	usageError = cli.UsageError
	signalHub  = cli.SignalHub
	sizeFlag   = cli.SizeFlag
	memFlag    = cli.MemFlag
)

func flagErr(name string, err error) error             { return cli.FlagErr(name, err) }
func flagMsg(name, msg string) error                   { return cli.FlagMsg(name, msg) }
func fail(stderr io.Writer, cmd string, err error) int { return cli.Fail(stderr, cmd, err) }
func withoutPrefix(err error, prefix string) error     { return cli.WithoutPrefix(err, prefix) }
func version() string                                  { return cli.Version() }
func checkJobs(flag string, getenv func(string) string) (string, error) {
	return cli.CheckJobs(flag, getenv)
}
func checkFSRoot(root string) error { return cli.CheckFSRoot(root) }
func signalStatus(s os.Signal) int  { return cli.SignalStatus(s) }
func sigName(s os.Signal) string    { return cli.SigName(s) }
func handleSignals(h *signalHub, r *runner.Runner, stderr io.Writer, say func(slog.Level, string, string, ...any), status func(), termTimeout, grace time.Duration) (stop func() os.Signal) {
	return cli.HandleSignals(h, r, stderr, say, status, termTimeout, grace)
}
func memorySampler(fsRoot string, getenv func(string) string, jobs *jobcgroup.Group) *memory.Sampler {
	return cli.MemorySampler(fsRoot, getenv, jobs)
}
func parentShell(getenv func(string) string) string { return cli.ParentShell(getenv) }
func isJobsFile(v string) bool                      { return cli.IsJobsFile(v) }
func readJobsFile(path string) (string, error)      { return cli.ReadJobsFile(path) }
func unwrapPathErr(err error) error                 { return cli.UnwrapPathErr(err) }

const jobsZero = cli.JobsZero

func jobsZeroReason(reason string) string { return cli.JobsZeroReason(reason) }
