package flagvalue

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ration-run/ration/runner"
)

// ParseTermSeq parses GNU parallel's --termseq: signals and waits in
// milliseconds, alternating and separated by commas
// (TERM,200,TERM,100,TERM,50,KILL,25). A signal is a name, with or
// without SIG, or a number; a missing last wait is 0.
func ParseTermSeq(s string) (runner.TermSeq, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("empty sequence (want SIGNAL,MS[,SIGNAL,MS...], e.g. TERM,200,KILL,25)")
	}
	parts := strings.Split(s, ",")
	var q runner.TermSeq
	for i := 0; i < len(parts); i += 2 {
		sig, err := parseSignal(strings.TrimSpace(parts[i]))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s, err)
		}
		step := runner.TermStep{Signal: sig}
		if i+1 < len(parts) {
			w := strings.TrimSpace(parts[i+1])
			ms, err := strconv.ParseUint(w, 10, 31)
			if err != nil {
				return nil, fmt.Errorf("%q: %q is not a wait in milliseconds", s, w)
			}
			step.Wait = time.Duration(ms) * time.Millisecond
		}
		q = append(q, step)
	}
	return q, nil
}

// parseSignal is a signal named as kill(1) takes it: TERM, SIGTERM, 15.
func parseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || n > 64 {
			return 0, fmt.Errorf("%d is not a signal number", n)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig, ok := signalNumber(name); ok {
		return sig, nil
	}
	return 0, fmt.Errorf("%q is not a signal name", s)
}
