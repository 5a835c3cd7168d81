// Command poolmap streams its stdin, one input per line, through
// pool.Map with the default pool size and a small CPU-only function, and
// prints how many results it received. The "flat memory" scenario measures
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
	fmt.Printf("results %d failed %d size %d xor %d\n", n, failed, p.Size(), x)
	if failed > 0 {
		os.Exit(1)
	}
}
