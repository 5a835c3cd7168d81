// Command poolmap streams its stdin, one input per line, through
// pool.Map with the default pool size and a small CPU-only function, and
// prints how many results it received, the live heap after a final
// garbage collection, and the number of collections. The "flat memory" scenario measures
// its peak RSS against the number of inputs.
//
// Usage:
//
//	seq 1000000 | poolmap
//
// It exits 1 if any item failed or a line could not be read.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"iter"
	"os"
	"runtime"

	"github.com/ration-run/ration/pool"
)

func main() {
	ctx := context.Background()
	p := pool.New(0)
	sc := bufio.NewScanner(os.Stdin)
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
	var n, failed int
	var x byte
	for r := range pool.Map(ctx, p, lines, work) {
		n++
		if r.Err != nil {
			failed++
		}
		x ^= r.Value
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
