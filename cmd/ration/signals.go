package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ration-run/ration/runner"
)

// handleSignals handles the run's signals until the returned stop is
// called: the first SIGINT/SIGTERM drains r, the second kills its jobs;
// where it exists (not on Windows), SIGUSR1 prints r's running-jobs
// table. stop returns the first SIGINT/SIGTERM, nil if none. signal.Notify
// lives here only: the runner takes Drain and Kill.
func handleSignals(r *runner.Runner, stderr io.Writer, say func(slog.Level, string, string, ...any), termTimeout time.Duration) (stop func() os.Signal) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, runSignals()...)
	done := make(chan struct{})
	exited := make(chan os.Signal, 1)
	go func() {
		var first os.Signal
		defer func() { exited <- first }()
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				switch {
				case isStatusSignal(s):
					_ = r.WriteStatus(stderr) // stderr gone: nobody to tell
				case first == nil:
					first = s
					say(slog.LevelWarn, "ration run: ", fmt.Sprintf("got %s: starting no more jobs; %d running get %s to finish (signal again to kill them)",
						sigName(s), len(r.Running()), termTimeout))
					r.Drain()
				default:
					say(slog.LevelWarn, "ration run: ", fmt.Sprintf("got %s again: killing the running jobs", sigName(s)))
					r.Kill()
				}
			}
		}
	}()
	return func() os.Signal {
		close(done)
		got := <-exited
		signal.Stop(sigs)
		return got
	}
}

// signalStatus is the exit status of a run interrupted by s: 128+N, as a
// shell reports a process killed by signal N.
func signalStatus(s os.Signal) int {
	if sig, ok := s.(syscall.Signal); ok {
		return 128 + int(sig)
	}
	return exitUsage
}
