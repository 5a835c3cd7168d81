package jobtable_test

import (
	"os"
	"time"

	"github.com/ration-run/ration/internal/jobtable"
	"github.com/ration-run/ration/runner/event"
)

// The table that SIGUSR1 prints: one row per running job, in slot order,
// with how long its attempt has run.
func ExampleWriteTable() {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	rows := []event.Row{
		{Seq: 3, Slot: 1, PID: 4242, Input: "small.csv", Started: now.Add(-2 * time.Second)},
		{Seq: 1, Slot: 2, PID: 4200, Input: "huge.csv", Started: now.Add(-90 * time.Second),
			LastLine: "chunk 9 of 12"},
	}
	if err := jobtable.WriteTable(os.Stdout, rows, now); err != nil {
		panic(err)
	}
	// Output:
	// SLOT  PID   SEQ  RUNNING  INPUT      LAST OUTPUT
	// 1     4242  3    2s       small.csv  -
	// 2     4200  1    1m30s    huge.csv   chunk 9 of 12
}
