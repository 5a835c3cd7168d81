package jobtable

import (
	"time"

	"github.com/ration-run/ration/runner/event"
)

// JSONRow is an event.Row as a JSON log record carries it: the "jobs" of the
// stall record and of the SIGUSR1 status record.
type JSONRow struct {
	Slot           int     `json:"slot"`
	PID            int     `json:"pid"`
	Seq            int64   `json:"seq"`
	Input          string  `json:"input"`
	RunningSeconds float64 `json:"running_seconds"`
	LastLine       string  `json:"last_line"`
}

// JSONRows returns rows as JSONRows, ordered by slot as WriteTable orders
// them, their running times taken at now.
func JSONRows(rows []event.Row, now time.Time) []JSONRow {
	js := make([]JSONRow, len(rows))
	for i, r := range SortRows(rows) {
		js[i] = JSONRow{Slot: r.Slot, PID: r.PID, Seq: r.Seq, Input: r.Input,
			RunningSeconds: now.Sub(r.Started).Seconds(), LastLine: r.LastLine}
	}
	return js
}
