package runcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/flagvalue"
	"github.com/ration-run/ration/internal/jobtable"
	"github.com/ration-run/ration/internal/logs"
	"github.com/ration-run/ration/internal/metrics"
	"github.com/ration-run/ration/internal/watchdog"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/event"
)

// observeFlags are the flags of watching a run: logs, metrics and the
// stall watchdog.
type observeFlags struct {
	metricsAddr  string
	debug        bool
	logFormat    string
	quiet        bool
	stallTimeout string
	slowFactor   float64
}

// addObserveFlags adds observeFlags' flags to fs.
func addObserveFlags(fs *pflag.FlagSet, g *observeFlags) {
	fs.StringVar(&g.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on `HOST:PORT` under /metrics (:9090 every interface; port 0 picks one, logged at start, with --quiet as a warning)")
	fs.BoolVar(&g.debug, "debug", false, "log every job start and end; also serve /debug/pprof/ on --metrics-addr")
	fs.StringVar(&g.logFormat, "log-format", logs.FormatAuto, "log `FORMAT`: auto (human on a terminal, else text), human, text or json")
	fs.BoolVarP(&g.quiet, "quiet", "q", false, "log warnings and errors only (and the address of --metrics-addr with port 0), and no summary line")
	fs.StringVar(&g.stallTimeout, "stall-timeout", "", "when no job finished for `DURATION`, report the running jobs and ration's goroutines (default off)")
	fs.Float64Var(&g.slowFactor, "slow-factor", 5, "warn once about a job running `F` times longer than the median job, and at least 1s (0: off)")
}

// observation is the running metrics server and stall watchdog of a run.
type observation struct {
	log     *slog.Logger
	metrics *metrics.Metrics // nil without --metrics-addr
	srv     *metrics.Server
	srvLvl  slog.Level // of the "serving metrics" record
	wd      *watchdog.Watchdog
	quiet   bool // --quiet: no job records

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newObservation binds the metrics address (a taken port is a usage
// error, before any job runs) and makes the watchdog, which reads the
// running jobs from rows once started.
func newObservation(o observePlan, log *slog.Logger, stderr io.Writer, d limits.Decision, fsRoot string, rows func() []watchdog.Row) (*observation, error) {
	ob := &observation{log: log, quiet: o.quiet}
	// A JSON log carries the stall table in its record; otherwise the
	// table goes to stderr as a block a person reads.
	var out io.Writer = stderr
	if o.json {
		out = nil
	}
	wd, err := watchdog.New(watchdog.Options{Running: rows, StallTimeout: o.stall, SlowFactor: o.slowFactor, Logger: log, Out: out})
	if err != nil {
		return nil, err
	}
	ob.wd = wd
	if o.metricsAddr == "" {
		return ob, nil
	}
	ob.metrics = metrics.New(metrics.Options{Sample: metrics.CgroupSampler(cgroup.Reader{Root: fsRoot})})
	ob.metrics.SetLimits(d)
	ob.metrics.SetPoolSize(d.Jobs)
	reg := prometheus.NewRegistry()
	reg.MustRegister(ob.metrics)
	if ob.srv, err = metrics.Listen(o.metricsAddr, reg, metrics.ServerOptions{Debug: o.debug, Logger: log}); err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", errors.Unwrap(err))
	}
	// A port chosen by the system can be learnt only from this record:
	// --quiet keeps it, as a warning.
	ob.srvLvl = slog.LevelInfo
	if _, port, err := net.SplitHostPort(o.metricsAddr); err == nil && port == "0" && o.quiet {
		ob.srvLvl = slog.LevelWarn
	}
	return ob, nil
}

// observers returns the run's observers: logs, watchdog, metrics.
func (o *observation) observers() event.Multi {
	obs := event.Multi{logs.NewObserver(o.log, logs.Options{Quiet: o.quiet}), o.wd}
	if o.metrics != nil {
		obs = append(obs, o.metrics) // a nil *Metrics in Multi would not be skipped
	}
	return obs
}

// start serves metrics and runs the watchdog until stop.
func (o *observation) start() {
	ctx, cancel := context.WithCancel(context.Background())
	o.cancel = cancel
	if o.srv != nil {
		o.log.Log(ctx, o.srvLvl, "serving metrics", "event", "metrics_serving", "addr", o.srv.Addr().String(), "url", "http://"+o.srv.Addr().String()+"/metrics")
		o.wg.Go(func() {
			if err := o.srv.Serve(ctx); err != nil {
				o.log.Warn("metrics server stopped", "err", err)
			}
		})
	}
	o.wg.Go(func() { _ = o.wd.Run(ctx) })
}

// stop ends the metrics server (after scrapes in flight) and the watchdog.
func (o *observation) stop() {
	if o.cancel != nil {
		o.cancel()
	}
	o.wg.Wait()
}

// sayer writes ration's own messages (warnings, the summary, the
// interruption notice and resume hint) to stderr: as plain lines starting
// with "ration run: " or "ration: ", or, with --log-format json, as log
// records, so that every line on stderr parses as JSON.
type sayer struct {
	w    io.Writer
	log  *slog.Logger
	json bool
}

// say writes msg after prefix as one line, or logs msg at level with
// attrs (key-value pairs) in JSON mode.
func (s sayer) say(level slog.Level, prefix, msg string, attrs ...any) {
	if s.json {
		s.log.Log(context.Background(), level, msg, attrs...)
		return
	}
	fmt.Fprintf(s.w, "%s%s\n", prefix, strings.ReplaceAll(msg, "\n", "; "))
}

// writeStatus writes the SIGUSR1 report: the runner's counts and table on
// stderr, or, with JSON logs, one record with the running jobs as the
// stall record has them, so that the log stays one object per line.
func (w *wiring) writeStatus() {
	if !w.plan.observe.json {
		_ = w.runner.WriteStatus(w.stderr) // stderr gone: nobody to tell
		return
	}
	s := w.runner.Status()
	attrs := []any{"event", "status", "running", len(s.Running), "succeeded", s.Succeeded, "failed", s.Failed,
		"killed", s.Killed, "pool_size", s.Pool.Size, "busy", s.Pool.Busy, "completed", s.Pool.Completed,
		"jobs", jobtable.JSONRows(s.Running, time.Now())}
	if s.Workers != "" {
		attrs = append(attrs, "workers", s.Workers)
	}
	w.log.Info("status", attrs...)
}

// observePlan are the settings of metrics, logs and the stall watchdog.
type observePlan struct {
	metricsAddr string // "" for no metrics server
	debug       bool
	quiet       bool
	json        bool          // --log-format json
	stall       time.Duration // 0: no stall check
	slowFactor  float64       // 0: no slow-job warnings
}

// planLogs checks the log flags. A JSON log carries a job's start or task
// error in its job_finished record, not also as a plain line.
func planLogs(p *runPlan, f *runFlags, _ func(string) string) error {
	if f.quiet && f.debug {
		return flagMsg("--quiet", "--quiet and --debug exclude each other")
	}
	p.log = logs.Options{Format: f.logFormat, Quiet: f.quiet, Debug: f.debug}
	// The logger the wiring makes writes to stderr; this one only checks
	// the options.
	if _, err := logs.New(io.Discard, p.log); err != nil {
		return flagErr("--log-format", err)
	}
	// A failed job is one line: its log record, which carries the error
	// (not also a "ration: ..." line in the job's stderr). --quiet logs
	// no job record, so there the line in the job's stderr is the only
	// word of why a job failed that only ration can tell (a command that
	// cannot start, a worker's task error), as a shell or xargs prints it.
	p.cfg.OmitErrorLines = !f.quiet
	return nil
}

// planObserve checks the flags of metrics and the stall watchdog.
func planObserve(p *runPlan, f *runFlags, _ func(string) string) error {
	o := observePlan{metricsAddr: f.metricsAddr, debug: f.debug, quiet: f.quiet, json: f.logFormat == logs.FormatJSON, slowFactor: f.slowFactor}
	if f.stallTimeout != "" {
		v, err := flagvalue.ParseDuration(f.stallTimeout)
		if err != nil {
			return flagErr("--stall-timeout", fmt.Errorf("%q is not a duration", f.stallTimeout))
		}
		o.stall = v
	}
	if f.slowFactor < 0 || f.slowFactor != f.slowFactor {
		return flagErr("--slow-factor", fmt.Errorf("%v is not a factor >= 0", f.slowFactor))
	}
	p.observe = o
	return nil
}
