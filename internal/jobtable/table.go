// Package jobtable draws the running jobs (event.Row) as the SIGUSR1
// report's table and as the "jobs" of the JSON status and stall records,
// so that the runner, the worker pool and the stall watchdog show the same
// table.
//
// It imports the standard library and runner/event only.
package jobtable

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/ration-run/ration/runner/event"
)

// SortRows returns a copy of rows ordered by slot, then job number.
func SortRows(rows []event.Row) []event.Row {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b event.Row) int {
		if a.Slot != b.Slot {
			return a.Slot - b.Slot
		}
		return int(a.Seq - b.Seq)
	})
	return rows
}

// WriteTable writes the running jobs as an aligned table, ordered by slot:
//
//	SLOT  PID    SEQ  RUNNING  INPUT        LAST OUTPUT
//	1     41203  17   12m3s    data/17.csv  chunk 9 of 12
//
// Inputs and lines are cut to 80 characters; ones with control characters
// or invalid UTF-8 are shown Go-quoted, so every job is one line. With no
// rows it writes "(no jobs running)". The table goes out in one Write.
func WriteTable(w io.Writer, rows []event.Row, now time.Time) error {
	var b bytes.Buffer
	if len(rows) == 0 {
		b.WriteString("(no jobs running)\n")
	} else {
		tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "SLOT\tPID\tSEQ\tRUNNING\tINPUT\tLAST OUTPUT")
		for _, r := range SortRows(rows) {
			pid := "-" // no process: a task waiting to be re-dispatched
			if r.PID > 0 {
				pid = strconv.Itoa(r.PID)
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\n", r.Slot, pid, r.Seq,
				FormatRunning(now.Sub(r.Started)), Clip(r.Input, 80), Clip(r.LastLine, 80))
		}
		tw.Flush()
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// FormatRunning rounds a running time to what a person reads: tenths of
// a second under a minute, seconds above.
func FormatRunning(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// Clip makes s one printable table cell of at most n runes (n >= 4):
// Go-quoted when it holds control characters or invalid UTF-8, cut with
// "..." when longer, "-" when empty.
func Clip(s string, n int) string {
	quote := !utf8.ValidString(s)
	for _, r := range s {
		if r < ' ' || r == 0x7f || !strconv.IsPrint(r) && r != ' ' {
			quote = true
			break
		}
	}
	if quote {
		s = strconv.Quote(s)
		s = s[1 : len(s)-1]
	}
	if utf8.RuneCountInString(s) > n {
		rs := []rune(s)
		s = string(rs[:n-3]) + "..."
	}
	if s == "" {
		return "-"
	}
	return s
}
