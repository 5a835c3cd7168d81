//go:build !unix

package sem

import (
	"context"
	"errors"
	"fmt"
	"os"
)

var errUnsupported = fmt.Errorf("semaphore: %w: needs flock", errors.ErrUnsupported)

// Open returns an error wrapping errors.ErrUnsupported: there is no
// flock here.
func Open(dir string, o Options) (*Semaphore, error) { return nil, errUnsupported }

// Slot is one held slot of a semaphore.
type Slot struct{ f *os.File }

// File returns the slot's open file.
func (s *Slot) File() *os.File { return s.f }

// SlotFrom returns the slot held through f.
func SlotFrom(f *os.File) *Slot { return &Slot{f: f} }

// Release gives the slot back.
func (s *Slot) Release() error { return errUnsupported }

// Acquire returns an error wrapping errors.ErrUnsupported.
func (s *Semaphore) Acquire(ctx context.Context, n int) (*Slot, error) { return nil, errUnsupported }

// Steal returns an error wrapping errors.ErrUnsupported.
func (s *Semaphore) Steal() (*Slot, error) { return nil, errUnsupported }

// Wait returns an error wrapping errors.ErrUnsupported.
func (s *Semaphore) Wait(ctx context.Context, n int) error { return errUnsupported }

// Holders returns an error wrapping errors.ErrUnsupported.
func (s *Semaphore) Holders() (int, error) { return 0, errUnsupported }
