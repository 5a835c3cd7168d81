package limitscmd

import (
	"io"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/cmd/ration/internal/cli"
	"github.com/ration-run/ration/limits"
)

// The names this package's files use for what ration's commands share
// (package cli).

const (
	exitUsage          = cli.ExitUsage
	jobCgroupEnv       = cli.JobCgroupEnv
	memoryAdmissionEnv = cli.MemoryAdmissionEnv
)

type (
	memFlag        = cli.MemFlag
	jobsCgroupJSON = cli.JobsCgroupJSON
)

func flagMsg(name, msg string) error                   { return cli.FlagMsg(name, msg) }
func fail(stderr io.Writer, cmd string, err error) int { return cli.Fail(stderr, cmd, err) }
func checkJobs(flag string, getenv func(string) string) (string, error) {
	return cli.CheckJobs(flag, getenv)
}
func checkFSRoot(root string) error            { return cli.CheckFSRoot(root) }
func isJobsFile(v string) bool                 { return cli.IsJobsFile(v) }
func readJobsFile(path string) (string, error) { return cli.ReadJobsFile(path) }
func jobCgroupJSON(s cgroup.Snapshot, getenv func(string) string) *jobsCgroupJSON {
	return cli.JobCgroupJSON(s, getenv)
}
func jobCgroupPlan(j *jobsCgroupJSON) string { return cli.JobCgroupPlan(j) }
func memoryBinding(d limits.Decision, getenv func(string) string) string {
	return cli.MemoryBinding(d, getenv)
}

const jobsZero = cli.JobsZero

func jobsZeroReason(reason string) string { return cli.JobsZeroReason(reason) }
