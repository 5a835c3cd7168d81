// Package runcmd is `ration run`: its flags, each group declared, planned
// and wired in one file (jobs, inputs, observe, worker, failures, joblog,
// and GNU parallel's options in gnu_*.go), and the run function that builds
// a runner.Config from them, runs it and turns the Summary into an exit
// status.
//
// It imports the library (runner and its packages, limits, cgroup), the
// engine's internal packages and the command line's own (cli, flagvalue,
// logs, progress, metrics, watchdog, workerexec, workershell); it must not
// import another command's package.
package runcmd
