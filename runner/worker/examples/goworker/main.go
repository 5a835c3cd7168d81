// Command goworker is a ration worker written in Go: it reads one JSON task
// per line on stdin and answers one JSON line per task on stdout, keeping
// its warm state (here a task counter) between tasks.
//
//	go build -o goworker ./runner/worker/examples/goworker
//	ration run --worker ./goworker ::: a b c
//
// It understands the same inputs as examples/worker.py: "fail:MSG",
// "alloc:MIB[:HOLD_MS]", "sleep:MS[:TAG]", "exit:CODE", "kill:SIG", "garbage", "stderr:TEXT";
// any other input is answered with {"input", "pid", "tasks"}.
//
// It imports the standard library only, as a worker in any language would:
// the protocol is JSON lines, not a Go API.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

type request struct {
	ID    int64  `json:"id"`
	Input string `json:"input"`
}

type answer struct {
	ID     int64  `json:"id"`
	OK     bool   `json:"ok"`
	Output any    `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

type state struct{ tasks int }

func (s *state) handle(in string) (any, error) {
	kind, arg, _ := strings.Cut(in, ":")
	switch kind {
	case "fail":
		return nil, errors.New(arg)
	case "alloc":
		mib, hold, _ := strings.Cut(arg, ":")
		n, _ := strconv.Atoi(mib)
		ms, _ := strconv.Atoi(hold)
		block := make([]byte, n<<20)
		for i := 0; i < len(block); i += 4096 { // touch every page: make it resident
			block[i] = 1
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
		_ = block[len(block)-1]
		// Give the block back to the kernel now, as worker.py's freed
		// bytearray is: an idle worker keeping a finished task's memory
		// would count against the next task in a memory-bound test.
		debug.FreeOSMemory() // block is dead from here on
		return in, nil
	case "sleep": // sleep:MS or sleep:MS:TAG
		n, _, _ := strings.Cut(arg, ":")
		ms, _ := strconv.Atoi(n)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return in, nil
	case "exit":
		code, _ := strconv.Atoi(arg)
		os.Exit(code)
	case "kill":
		n, _ := strconv.Atoi(arg)
		signal.Reset() // die by the signal, as the runtime would not let us
		dieBy(n)
		time.Sleep(10 * time.Second)
	case "garbage":
		fmt.Println("this is not JSON")
		return nil, nil
	case "stderr":
		fmt.Fprintln(os.Stderr, arg)
		return in, nil
	}
	return map[string]any{"input": in, "pid": os.Getpid(), "tasks": s.tasks}, nil
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out) // Encode ends every value with a newline
	var s state
	for in.Scan() { // EOF (stdin closed by ration): leave the loop, exit 0
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "goworker: bad request:", err)
			os.Exit(2)
		}
		s.tasks++
		a := answer{ID: req.ID, OK: true}
		out1, err := s.handle(req.Input)
		if err != nil {
			a.OK, a.Error = false, err.Error()
		} else {
			a.Output = out1
		}
		if a.OK && a.Output == nil {
			a.Output = json.RawMessage("null") // "output" must be present when ok
		}
		if err := enc.Encode(a); err != nil {
			os.Exit(1)
		}
		if err := out.Flush(); err != nil { // one answer per line, at once
			os.Exit(1)
		}
	}
}
