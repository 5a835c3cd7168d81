// Package logs builds ration's *slog.Logger from its command-line flags and
// logs a run's events through it.
//
// # Formats
//
//   - "auto" (the default): "human" when the writer is a terminal (see
//     IsTerminal), "text" otherwise.
//   - "human": one short line per record for a person at a terminal:
//     clock time, level, message, then key=value pairs.
//   - "text": slog's logfmt (time=... level=... msg=... key=value), one
//     line per record, for files and grep.
//   - "json": slog's JSON, one object per line, for Kubernetes and log
//     shippers (--log-format json).
//
// # Levels
//
// The default level is info: retries, worker breaks, pool changes, failed
// jobs and stall reports. --debug adds one record per job start and end
// and per worker start. --quiet keeps the warnings and errors about ration
// itself only (worker breaks, pool recreation, stalls) and logs no job
// record, failures included (see NewObserver). --quiet and --debug
// together are a usage error.
//
// It belongs to the command line: of this module it imports runner/event
// only, and no library package may import it.
package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The formats New accepts.
const (
	FormatAuto  = "auto"
	FormatHuman = "human"
	FormatText  = "text"
	FormatJSON  = "json"
)

// Options are the logging flags.
type Options struct {
	// Format is one of the Format constants; "" means FormatAuto.
	Format string
	// Quiet (--quiet) logs warnings and errors only.
	Quiet bool
	// Debug (--debug) logs debug records too.
	Debug bool
}

// Level returns the minimum level the options select.
func (o Options) Level() slog.Level {
	switch {
	case o.Debug:
		return slog.LevelDebug
	case o.Quiet:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// New returns a logger writing to w in the format and at the level opts
// select. The error reports an unknown format or Quiet together with
// Debug, in the Options' terms. Every record is written with one Write call,
// so records from concurrent goroutines never interleave.
func New(w io.Writer, opts Options) (*slog.Logger, error) {
	if opts.Quiet && opts.Debug {
		return nil, errors.New("logs: Quiet and Debug exclude each other")
	}
	format := opts.Format
	if format == "" || format == FormatAuto {
		format = FormatText
		if IsTerminal(w) {
			format = FormatHuman
		}
	}
	ho := &slog.HandlerOptions{Level: opts.Level()}
	switch format {
	case FormatHuman:
		return slog.New(NewHumanHandler(w, ho)), nil
	case FormatText:
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case FormatJSON:
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("unknown log format %q (want auto, human, text or json)", opts.Format)
}

// IsTerminal reports whether w writes to a terminal: an *os.File open on
// one, or a writer with the Fd method of the file it writes to (the
// progress bar's writer), so that the logs keep the human format while
// the bar is shown.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && isTerminal(f.Fd())
}

// HumanHandler is a slog.Handler for a person at a terminal:
//
//	14:03:07 WARN  job failed seq=17 exit=1 duration=2.1s input="a b.txt"
//
// Values are quoted when they contain spaces, quotes, control characters or
// invalid UTF-8, so one record is always one line.
type HumanHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	level  slog.Leveler
	prefix string // the group prefix for keys, "a.b."
	attrs  []byte // preformatted attributes from WithAttrs
}

// NewHumanHandler returns a HumanHandler writing to w. Only opts.Level is
// used; nil opts means level info.
func NewHumanHandler(w io.Writer, opts *slog.HandlerOptions) *HumanHandler {
	h := &HumanHandler{mu: new(sync.Mutex), w: w, level: slog.LevelInfo}
	if opts != nil && opts.Level != nil {
		h.level = opts.Level
	}
	return h
}

// Enabled reports whether level is at or above the handler's level.
func (h *HumanHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle writes r as one line.
func (h *HumanHandler) Handle(_ context.Context, r slog.Record) error {
	buf := make([]byte, 0, 256)
	if !r.Time.IsZero() {
		buf = r.Time.AppendFormat(buf, "15:04:05")
		buf = append(buf, ' ')
	}
	buf = fmt.Appendf(buf, "%-5s ", r.Level.String())
	buf = append(buf, clean(r.Message)...)
	buf = append(buf, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		buf = appendAttr(buf, h.prefix, a)
		return true
	})
	buf = append(buf, '\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(buf)
	return err
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *HumanHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = slices.Clone(h.attrs)
	for _, a := range attrs {
		h2.attrs = appendAttr(h2.attrs, h.prefix, a)
	}
	return &h2
}

// WithGroup returns a handler that qualifies later keys with name.
func (h *HumanHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix = h.prefix + name + "."
	return &h2
}

func appendAttr(buf []byte, prefix string, a slog.Attr) []byte {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return buf
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			buf = appendAttr(buf, p, ga)
		}
		return buf
	}
	buf = append(buf, ' ')
	buf = append(buf, prefix...)
	buf = append(buf, a.Key...)
	buf = append(buf, '=')
	var s string
	switch a.Value.Kind() {
	case slog.KindDuration:
		s = a.Value.Duration().Round(time.Millisecond).String()
	case slog.KindTime:
		s = a.Value.Time().Format(time.RFC3339)
	default:
		s = a.Value.String()
	}
	return append(buf, quoteIfNeeded(s)...)
}

// quoteIfNeeded quotes s when it would not read as one token.
func quoteIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	if !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r <= ' ' || r == '"' || r == '=' || r == 0x7f || !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// clean makes a message safe for one line without quoting ordinary text.
func clean(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		q := strconv.Quote(s)
		return q[1 : len(q)-1]
	}
	return s
}
