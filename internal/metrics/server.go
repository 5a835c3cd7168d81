package metrics

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ServerOptions configure Listen and Handler.
type ServerOptions struct {
	// Debug also serves the Go profiler under /debug/pprof/ (--debug).
	// Profiles show command lines and memory contents of ration itself,
	// so they are off unless asked for.
	Debug bool
	// Logger receives HTTP server errors (a client that hangs up, a failed
	// scrape). Nil discards them.
	Logger *slog.Logger
	// ShutdownTimeout bounds how long Serve waits for scrapes in flight
	// after its context ends; 0 means 5 seconds.
	ShutdownTimeout time.Duration
}

// Handler returns the handler Listen serves: /metrics from g, and with
// opts.Debug the profiler under /debug/pprof/. Other paths are 404.
//
// The profiler handlers are mounted on this handler's own mux. (Importing
// net/http/pprof also registers them on http.DefaultServeMux; ration never
// serves that mux.)
func Handler(g prometheus.Gatherer, opts ServerOptions) http.Handler {
	mux := http.NewServeMux()
	var errLog promhttp.Logger
	if opts.Logger != nil {
		errLog = log.New(slogWriter{opts.Logger}, "", 0)
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{
		ErrorLog:      errLog,
		ErrorHandling: promhttp.ContinueOnError, // a partial scrape beats none during an incident
	}))
	if opts.Debug {
		mux.HandleFunc("/debug/pprof/", pprof.Index) // serves named profiles: heap, goroutine, ...
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// Server serves metrics on a listening socket. Create it with Listen.
type Server struct {
	ln      net.Listener
	srv     *http.Server
	timeout time.Duration
}

// Listen binds addr (host:port; ":9090" is every interface, port 0 picks a
// free port) and returns a Server ready to Serve g. Binding here, before
// the run starts, makes a taken port a start-up error rather than a log
// line in the middle of a run.
func Listen(addr string, g prometheus.Gatherer, opts ServerOptions) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           Handler(g, opts),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if opts.Logger != nil {
		srv.ErrorLog = log.New(slogWriter{opts.Logger}, "", 0)
	}
	timeout := opts.ShutdownTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &Server{ln: ln, srv: srv, timeout: timeout}, nil
}

// Addr is the address the server listens on, with the port chosen.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve answers requests until ctx ends, then shuts down gracefully
// (waiting at most ShutdownTimeout for requests in flight) and returns nil.
// It returns an error only when serving fails for another reason. Call it
// once.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close() // a stuck client must not hold up the exit of ration
	}
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("metrics: shutdown: %w", err)
	}
	return nil
}

// slogWriter adapts a *slog.Logger to the log.Logger that net/http and
// promhttp want.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	msg := string(p)
	if n := len(msg); n > 0 && msg[n-1] == '\n' {
		msg = msg[:n-1]
	}
	w.l.Warn("metrics server", "err", msg)
	return len(p), nil
}
