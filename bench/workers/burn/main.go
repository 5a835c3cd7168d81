// Command burn is the benchmark job: it touches a block of memory and then
// burns CPU until the whole process has used a fixed amount of CPU time.
//
// Usage:
//
//	burn [-ms 100] [-mib 40] [-big-every 0] [-big-mib 300] ID
//
// The CPU budget is measured with getrusage(RUSAGE_SELF) (user + system,
// every thread, from exec on), not with a wall clock, so a job costs the
// same CPU whether it runs alone or throttled next to 50 others: a slow
// contender cannot look fast because its jobs did less work. Every page of
// the block is written, so the memory is really resident.
//
// When -big-every N is above 0 and ID is a multiple of N, the job touches
// -big-mib MiB instead: the job that an OOM killer should take.
//
// On success it prints "done ID" on stdout and exits 0. A malformed ID or
// flag exits 2 with a one-line message on stderr.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ms := flag.Int("ms", 100, "CPU time to burn, in milliseconds (whole process, from exec)")
	mib := flag.Int("mib", 40, "memory to touch, in MiB")
	bigEvery := flag.Int("big-every", 0, "if > 0, every job whose ID is a multiple of this touches -big-mib instead")
	bigMiB := flag.Int("big-mib", 300, "memory touched by a big job, in MiB")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "burn: want exactly one ID argument")
		os.Exit(2)
	}
	arg := strings.TrimSpace(flag.Arg(0))
	id, err := strconv.Atoi(arg)
	if err != nil || *ms < 0 || *mib < 0 {
		fmt.Fprintf(os.Stderr, "burn: bad ID or flags: %q\n", arg)
		os.Exit(2)
	}
	size := *mib
	if *bigEvery > 0 && id%*bigEvery == 0 {
		size = *bigMiB
	}
	block := make([]byte, size<<20)
	// Write one byte per page: make() returns lazily mapped zero pages.
	for i := 0; i < len(block); i += 4096 {
		block[i] = byte(i)
	}
	spin(time.Duration(*ms) * time.Millisecond)
	runtime.KeepAlive(block)
	fmt.Printf("done %d\n", id)
}

// spin burns CPU until the process's CPU time reaches budget.
func spin(budget time.Duration) {
	x := uint64(88172645463325252)
	for cpuTime() < budget {
		for range 20000 { // about 50 us between getrusage calls
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	if x == 42 { // keep the loop from being optimised away
		fmt.Fprint(os.Stderr, "")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 1 << 62 // cannot measure: stop burning rather than spin forever
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
