package worker

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/ration-run/ration/internal/jobtable"
)

// WriteStatus writes what every worker process is doing, for the SIGUSR1
// report after the running-jobs table (jobtable.WriteTable): one line of
// counts, then one line per worker, ordered by slot:
//
//	ration: workers: 3 live, 2 busy, 0 retiring; size 3, 3 started, 0 replaced
//	WORKER  PID    STATE     SEQ  FOR    INPUT
//	1       41203  busy      17   12m3s  data/17.csv
//	2       41207  idle      -    0.2s   -
//	3       -      starting  -    1.5s   -
//
// STATE is starting (no process yet), idle, busy, or retiring (finishing
// its last task, or stopping); SEQ and INPUT are the task it holds; FOR
// is how long it has held it, or been idle or starting. A worker that
// holds a task for long, or a pool whose workers are all starting, is
// what explains a hang in worker mode. The report goes out in one Write.
func (p *Pool) WriteStatus(w io.Writer, now time.Time) error {
	s := p.Stats()
	var b bytes.Buffer
	fmt.Fprintf(&b, "ration: workers: %d live, %d busy, %d retiring; size %d, %d started, %d replaced\n",
		s.Live, s.Busy, s.Retiring, s.Size, s.Starts, s.Replacements)
	if ws := p.Workers(); len(ws) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKER\tPID\tSTATE\tSEQ\tFOR\tINPUT")
		for _, wi := range ws {
			pid, state, seq, input := "-", "idle", "-", "-"
			if wi.PID > 0 {
				pid = strconv.Itoa(wi.PID)
			} else {
				state = "starting"
			}
			switch {
			case wi.Retiring:
				state = "retiring"
			case wi.Busy:
				state = "busy"
			}
			if wi.Busy {
				seq, input = strconv.FormatInt(wi.Seq, 10), jobtable.Clip(wi.Input, 80)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", wi.Slot, pid, state, seq, jobtable.FormatRunning(now.Sub(wi.Since)), input)
		}
		tw.Flush()
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("worker: write status: %w", err)
	}
	return nil
}
