package runhook

import (
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TermStep is one step of a termination sequence: send Signal to the
// job's process group, then wait up to Wait for the job to end.
type TermStep struct {
	Signal syscall.Signal
	Wait   time.Duration
}

// TermSeq is how a stopped job is signalled: the signals it gets, in
// order, each followed by the longest wait for the job to end before the
// next one. A job still running after the last step is killed (SIGKILL),
// whatever the last signal was, so a stopped job always ends. Empty: the
// runner's default, SIGTERM, Grace, SIGKILL.
type TermSeq []TermStep

// Total is the longest a job stopped by q takes to end: the sum of its
// waits.
func (q TermSeq) Total() time.Duration {
	var t time.Duration
	for _, s := range q {
		t += s.Wait
	}
	return t
}

// String is q as --termseq takes it: TERM,200,KILL,25.
func (q TermSeq) String() string {
	parts := make([]string, 0, 2*len(q))
	for _, s := range q {
		parts = append(parts, signalName(s.Signal), strconv.FormatInt(s.Wait.Milliseconds(), 10))
	}
	return strings.Join(parts, ",")
}
