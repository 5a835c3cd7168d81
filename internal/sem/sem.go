// Package sem is a counting semaphore shared between processes, GNU
// parallel's sem (parallel --semaphore): each holder of a slot is counted,
// and Acquire(ctx, n) waits until fewer than n slots are held.
//
// A semaphore is a directory. Every slot is a file in it (slot-0,
// slot-1, ...) held by an exclusive flock(2) lock; Acquire counts the
// locked slot files and takes a free one, both under a lock on the
// directory's lock file, so that two processes never take the last slot
// together. The kernel releases a process's locks when it dies, however
// it dies, so a dead holder never leaves a stale count behind (GNU
// parallel's semaphore, a hard link per holder, cleans up dead holders by
// their process ids instead). A slot is held by its open file description:
// a child process that inherits the slot's file (Slot.File, passed as an
// extra file) holds it too, until both have closed it.
//
// The counts are per directory and per acquirer: Acquire(ctx, n) compares
// the holders of every slot with its own n, so processes that give
// different n share one count, as in GNU parallel.
//
// On systems without flock (Windows) every function returns an error
// wrapping errors.ErrUnsupported.
//
// It belongs to the command line (ration sem): it imports the standard
// library only, and no library package may import it.
package sem

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// DefaultPoll is the longest wait between two tries of Acquire when
// Options.Poll is zero.
const DefaultPoll = 50 * time.Millisecond

// Options are a semaphore's options.
type Options struct {
	// Poll is the longest wait between two tries of a waiting Acquire
	// (zero: DefaultPoll). The waits start at a millisecond and grow.
	Poll time.Duration
}

// Semaphore is the semaphore in one directory. Its methods are safe for
// concurrent use by goroutines and processes.
type Semaphore struct {
	dir  string
	poll time.Duration
}

// Dir returns the directory of the semaphore named id under base: base/
// "ration-id-" followed by id, with every byte other than a-z, A-Z, 0-9,
// - and _ written as two hex digits (as GNU parallel names its semaphore
// directories, so that any id is one file name).
func Dir(base, id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%02x", c)
		}
	}
	return filepath.Join(base, "ration-id-"+b.String())
}
