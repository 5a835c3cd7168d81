//go:build unix

package sem

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Open returns the semaphore in dir, making the directory (and its
// parents) when it does not exist.
func Open(dir string, o Options) (*Semaphore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("semaphore: %w", err)
	}
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	return &Semaphore{dir: dir, poll: o.Poll}, nil
}

// Slot is one held slot of a semaphore.
type Slot struct {
	f *os.File
}

// File returns the slot's open file: a child process that inherits it
// (exec.Cmd.ExtraFiles) holds the slot as long as it keeps it open.
func (s *Slot) File() *os.File { return s.f }

// SlotFrom returns the slot held through f, a file a parent passed (see
// Slot.File), so that Release closes it.
func SlotFrom(f *os.File) *Slot { return &Slot{f: f} }

// Release gives the slot back (closes this process's file of it; a
// child that inherited it still holds it). Only its first call does
// anything.
func (s *Slot) Release() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// Acquire waits until fewer than n slots are held and takes one. It
// returns ctx's error, and holds nothing, when ctx ends first; n < 1 is
// an error.
func (s *Semaphore) Acquire(ctx context.Context, n int) (*Slot, error) {
	if n < 1 {
		return nil, fmt.Errorf("semaphore: %d slots: want at least 1", n)
	}
	wait := time.Millisecond
	for {
		slot, err := s.take(n)
		if slot != nil || err != nil {
			return slot, err
		}
		// Random, so that waiters do not all wake together.
		t := time.NewTimer(time.Duration(rand.Int64N(int64(wait))) + time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, s.poll)
	}
}

// Steal takes a slot however many are held (GNU parallel's
// --semaphoretimeout with a positive time): it counts as one more holder.
func (s *Semaphore) Steal() (*Slot, error) {
	return s.take(0)
}

// Wait waits until fewer than n slots are held, and takes none (GNU
// parallel's sem --wait, which acquires and releases at once).
func (s *Semaphore) Wait(ctx context.Context, n int) error {
	slot, err := s.Acquire(ctx, n)
	if err != nil {
		return err
	}
	return slot.Release()
}

// Holders returns how many slots are held now.
func (s *Semaphore) Holders() (int, error) {
	unlock, err := s.lockDir()
	if err != nil {
		return 0, err
	}
	defer unlock()
	held, free, err := s.scan()
	for _, f := range free {
		f.Close()
	}
	return held, err
}

// take takes a free slot when fewer than n are held (n <= 0: always), or
// returns nil, nil.
func (s *Semaphore) take(n int) (*Slot, error) {
	unlock, err := s.lockDir()
	if err != nil {
		return nil, err
	}
	defer unlock()
	held, free, err := s.scan()
	defer func() {
		for _, f := range free {
			f.Close()
		}
	}()
	if err != nil || (n > 0 && held >= n) {
		return nil, err
	}
	if len(free) > 0 {
		f := free[0]
		free = free[1:]
		return &Slot{f: f}, nil
	}
	// Every slot file is held: a new one, named after the highest.
	for i := held; ; i++ {
		f, err := os.OpenFile(s.slotPath(i), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("semaphore: %w", err)
		}
		if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			return nil, fmt.Errorf("semaphore: lock %s: %w", f.Name(), err)
		}
		return &Slot{f: f}, nil
	}
}

// scan tries every slot file: held counts those locked by others; free
// are the others, locked now by this process (the caller closes those it
// does not keep). It runs under the directory lock, so no other process
// takes a slot meanwhile; holders may only release theirs.
func (s *Semaphore) scan() (held int, free []*os.File, err error) {
	names, err := filepath.Glob(filepath.Join(s.dir, "slot-*"))
	if err != nil {
		return 0, nil, err
	}
	for _, name := range names {
		f, err := os.OpenFile(name, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return held, free, fmt.Errorf("semaphore: %w", err)
		}
		switch err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); {
		case err == nil:
			free = append(free, f)
		case errors.Is(err, syscall.EWOULDBLOCK):
			held++
			f.Close()
		default:
			f.Close()
			return held, free, fmt.Errorf("semaphore: lock %s: %w", name, err)
		}
	}
	return held, free, nil
}

// lockDir takes the directory's lock, which makes counting and taking a
// slot one step; unlock gives it back.
func (s *Semaphore) lockDir() (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("semaphore: %w", err)
	}
	if err := flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("semaphore: lock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

func (s *Semaphore) slotPath(i int) string {
	return filepath.Join(s.dir, "slot-"+strconv.Itoa(i))
}

// flock locks f, retrying when a signal interrupts the call.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
