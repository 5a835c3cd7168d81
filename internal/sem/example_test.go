//go:build unix

package sem_test

import (
	"context"
	"fmt"
	"os"

	"github.com/ration-run/ration/internal/sem"
)

// Two holders at most, as `sem -j2` would allow: the third Acquire would
// wait, so it gives up when its context ends; a released slot is free
// again.
func Example() {
	base, err := os.MkdirTemp("", "sem-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)

	s, err := sem.Open(sem.Dir(base, "build"), sem.Options{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	a, _ := s.Acquire(ctx, 2)
	b, _ := s.Acquire(ctx, 2)
	n, _ := s.Holders()
	fmt.Println("held:", n)

	full, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Acquire(full, 2)
	fmt.Println("third:", err)

	a.Release()
	n, _ = s.Holders()
	fmt.Println("after a release:", n)
	b.Release()
	// Output:
	// held: 2
	// third: context canceled
	// after a release: 1
}
