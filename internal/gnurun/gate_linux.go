package gnurun

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// GateSupported reports whether StartGate can read the machine here:
// from /proc, on Linux.
const GateSupported = true

// pfKthread is PF_KTHREAD of /proc/PID/stat's flags: a kernel thread,
// which GNU parallel's load leaves out (ps shows it as [name]).
const pfKthread = 0x00200000

// readMachine reads the load (when load is set: a scan of every thread),
// the swap counters and MemAvailable from the proc file system at dir.
func readMachine(dir string, load bool) (machine, error) {
	var m machine
	var errs []error
	if !load {
		errs = append(errs, errors.New("load not read"))
	} else if n, err := countBusyThreads(dir); err == nil {
		m.load, m.haveLoad = max(n-1, 0), true // less ration's own reading thread, as GNU less its ps
	} else {
		errs = append(errs, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "vmstat")); err == nil {
		m.swapIn, m.swapOut, m.haveVM = parseVMStat(data)
	} else {
		errs = append(errs, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "meminfo")); err == nil {
		m.memAvailable, m.haveMem = parseMemAvailable(data)
	} else {
		errs = append(errs, err)
	}
	if len(errs) == 3 {
		return m, errors.Join(errs...)
	}
	return m, nil
}

// countBusyThreads counts the threads of the machine in state R (running)
// or D (waiting for I/O), kernel threads left out.
func countBusyThreads(dir string) (int, error) {
	stats, err := filepath.Glob(filepath.Join(dir, "[0-9]*", "task", "[0-9]*", "stat"))
	if err != nil {
		return 0, err
	}
	if len(stats) == 0 {
		return 0, errors.New("no task in " + dir)
	}
	n := 0
	for _, p := range stats {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		if state, flags, ok := parseTaskStat(data); ok && (state == 'R' || state == 'D') && flags&pfKthread == 0 {
			n++
		}
	}
	return n, nil
}

// parseTaskStat returns the state and flags of a /proc/PID/stat line:
// the fields after the command name, which is in parentheses and may hold
// anything.
func parseTaskStat(data []byte) (state byte, flags uint64, ok bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	// state ppid pgrp session tty_nr tpgid flags
	if len(f) < 7 || len(f[0]) != 1 {
		return 0, 0, false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], flags, true
}

// parseVMStat returns pswpin and pswpout of /proc/vmstat.
func parseVMStat(data []byte) (in, out int64, ok bool) {
	var haveIn, haveOut bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), " ")
		if !found {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "pswpin":
			in, haveIn = n, true
		case "pswpout":
			out, haveOut = n, true
		}
	}
	return in, out, haveIn && haveOut
}

// parseMemAvailable returns MemAvailable of /proc/meminfo in bytes.
func parseMemAvailable(data []byte) (int64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !found {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n, true
	}
	return 0, false
}
