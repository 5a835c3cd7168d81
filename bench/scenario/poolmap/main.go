// Command poolmap streams its stdin, one input per line, through
// pool.Map with the default pool size and a small CPU-only function, and
// prints how many results it received, the live heap after a final
// garbage collection, and the number of collections. The "flat memory"
// scenario measures its peak RSS against the number of inputs.
//
// By default every line is a decimal number and becomes an int item, read
// without allocating, so the process makes no garbage of its own and its
// RSS is the pool's footprint (pool.Map allocates nothing per item). With
// -strings every line becomes a new string item instead, as in most real
// programs: a 16-byte allocation per item, which the Go runtime lets pile up
// to its minimum GC goal (4 MiB) before its first collection.
//
// Usage:
//
//	seq 1000000 | poolmap [-strings]
//
// It exits 1 if any item failed or a line could not be read, and 2 on a
// line that is not a number without -strings.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"iter"
	"os"
	"runtime"
	"strconv"

	"github.com/ration-run/ration/pool"
)

func main() {
	strs := flag.Bool("strings", false, "make every line a new string item (per-item garbage), not an int")
	flag.Parse()
	ctx := context.Background()
	p := pool.New(0)
	sc := bufio.NewScanner(os.Stdin)
	var n, failed int
	var x byte
	tally := func(r pool.Result[struct{}, byte]) {
		n++
		if r.Err != nil {
			failed++
		}
		x ^= r.Value
	}
	if *strs {
		lines := iter.Seq[string](func(yield func(string) bool) {
			for sc.Scan() {
				if !yield(sc.Text()) {
					return
				}
			}
		})
		work := func(_ context.Context, s string) (byte, error) {
			sum := sha256.Sum256([]byte(s))
			return sum[0], nil
		}
		for r := range pool.Map(ctx, p, lines, work) {
			tally(pool.Result[struct{}, byte]{Value: r.Value, Err: r.Err})
		}
	} else {
		nums := iter.Seq[int](func(yield func(int) bool) {
			for sc.Scan() {
				v, err := strconv.Atoi(string(sc.Bytes())) // no copy: the compiler sees the string does not escape
				if err != nil {
					fmt.Fprintf(os.Stderr, "poolmap: line %q is not a number (use -strings)\n", sc.Bytes())
					os.Exit(2)
				}
				if !yield(v) {
					return
				}
			}
		})
		work := func(_ context.Context, v int) (byte, error) {
			var b [20]byte
			sum := sha256.Sum256(strconv.AppendInt(b[:0], int64(v), 10))
			return sum[0], nil
		}
		for r := range pool.Map(ctx, p, nums, work) {
			tally(pool.Result[struct{}, byte]{Value: r.Value, Err: r.Err})
		}
	}
	if _, err := p.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "poolmap: close:", err)
		os.Exit(1)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "poolmap: read stdin:", err)
		os.Exit(1)
	}
	// The live heap after a full collection: what the process still holds
	// once the garbage of a million items is gone. RSS can be higher: the
	// runtime lets the heap grow to its GC goal (at least 4 MiB) first.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("results %d failed %d size %d xor %d live-heap-bytes %d gcs %d\n", n, failed, p.Size(), x, ms.HeapAlloc, ms.NumGC)
	if failed > 0 {
		os.Exit(1)
	}
}
