package event

import "time"

// Row is one running job as the runner sees it: what the SIGUSR1 report
// and the stall watchdog show for it.
type Row struct {
	Slot     int       // worker slot ({%}), 1-based
	PID      int       // process id of the job (or of its worker)
	Seq      int64     // job number ({#})
	Input    string    // the job's input
	Started  time.Time // when the current attempt started
	LastLine string    // the last line the job wrote to stdout or stderr, "" if none
}
