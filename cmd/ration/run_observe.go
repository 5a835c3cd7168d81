package main

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
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/logs"
	"github.com/ration-run/ration/runner/metrics"
	"github.com/ration-run/ration/runner/watchdog"
)

// observeFlags are the flags of issue 7: metrics, logs, stall watchdog.
type observeFlags struct {
	metricsAddr  *string
	debug        *bool
	logFormat    *string
	quiet        *bool
	stallTimeout *string
	slowFactor   *float64
}

func addObserveFlags(fs *pflag.FlagSet) *observeFlags {
	return &observeFlags{
		metricsAddr:  fs.String("metrics-addr", "", "serve Prometheus metrics on `HOST:PORT` under /metrics (:9090 every interface; port 0 picks one, logged at start, with --quiet as a warning)"),
		debug:        fs.Bool("debug", false, "log every job start and end; also serve /debug/pprof/ on --metrics-addr"),
		logFormat:    fs.String("log-format", logs.FormatAuto, "log `FORMAT`: auto (human on a terminal, else text), human, text or json"),
		quiet:        fs.BoolP("quiet", "q", false, "log warnings and errors only (and the address of --metrics-addr with port 0), and no summary line"),
		stallTimeout: fs.String("stall-timeout", "", "when no job finished for `DURATION`, report the running jobs and ration's goroutines (default off)"),
		slowFactor:   fs.Float64("slow-factor", 5, "warn once about a job running `F` times longer than the median job, and at least 1s (0: off)"),
	}
}

// logger builds the run's logger from the flags; its error is a usage
// error.
func (f *observeFlags) logger(stderr io.Writer) (*slog.Logger, error) {
	if *f.quiet && *f.debug {
		return nil, errors.New("--quiet and --debug exclude each other")
	}
	l, err := logs.New(stderr, logs.Options{Format: *f.logFormat, Quiet: *f.quiet, Debug: *f.debug})
	if err != nil {
		return nil, err // names the format and the ones wanted
	}
	return l, nil
}

// observation is the running metrics server and stall watchdog of a run.
type observation struct {
	log     *slog.Logger
	metrics *metrics.Metrics // nil without --metrics-addr
	srv     *metrics.Server
	srvLvl  slog.Level // of the "serving metrics" record
	wd      *watchdog.Watchdog

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// observe checks the watchdog flags, binds the metrics address (a taken
// port is a usage error, before any job runs) and returns the observers
// of the run. rows reads the running jobs; it is called only after start.
func (f *observeFlags) observe(log *slog.Logger, stderr io.Writer, d limits.Decision, fsRoot string, rows func() []watchdog.Row) (*observation, error) {
	var stall time.Duration
	if *f.stallTimeout != "" {
		v, err := runner.ParseDuration(*f.stallTimeout)
		if err != nil {
			return nil, fmt.Errorf("--stall-timeout: %q is not a duration", *f.stallTimeout)
		}
		stall = v
	}
	if *f.slowFactor < 0 || *f.slowFactor != *f.slowFactor {
		return nil, fmt.Errorf("--slow-factor: %v is not a factor >= 0", *f.slowFactor)
	}
	o := &observation{log: log}
	// A JSON log carries the stall table in its record; otherwise the
	// table goes to stderr as a block a person reads.
	var out io.Writer = stderr
	if *f.logFormat == logs.FormatJSON {
		out = nil
	}
	wd, err := watchdog.New(watchdog.Options{Running: rows, StallTimeout: stall, SlowFactor: *f.slowFactor, Logger: log, Out: out})
	if err != nil {
		return nil, err
	}
	o.wd = wd
	if *f.metricsAddr != "" {
		o.metrics = metrics.New(metrics.Options{Sample: metrics.CgroupSampler(cgroup.Reader{Root: fsRoot})})
		o.metrics.SetLimits(d)
		o.metrics.SetPoolSize(d.Jobs)
		reg := prometheus.NewRegistry()
		reg.MustRegister(o.metrics)
		if o.srv, err = metrics.Listen(*f.metricsAddr, reg, metrics.ServerOptions{Debug: *f.debug, Logger: log}); err != nil {
			return nil, fmt.Errorf("--metrics-addr: %w", errors.Unwrap(err))
		}
		// A port chosen by the system can be learnt only from this
		// record: --quiet keeps it, as a warning.
		o.srvLvl = slog.LevelInfo
		if _, port, err := net.SplitHostPort(*f.metricsAddr); err == nil && port == "0" && *f.quiet {
			o.srvLvl = slog.LevelWarn
		}
	}
	return o, nil
}

// observers returns the run's observers: logs, watchdog, metrics.
func (o *observation) observers() event.Multi {
	obs := event.Multi{logs.NewObserver(o.log), o.wd}
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
		o.log.Log(ctx, o.srvLvl, "serving metrics", "addr", o.srv.Addr().String(), "url", "http://"+o.srv.Addr().String()+"/metrics")
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

func (f *observeFlags) sayer(w io.Writer, log *slog.Logger) sayer {
	return sayer{w: w, log: log, json: *f.logFormat == logs.FormatJSON}
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
