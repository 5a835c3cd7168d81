package joblog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Record is what a joblog says about which jobs ended, for --resume and
// --resume-failed: by job number (two bits per number) and by command (a
// 128-bit hash of each Command column and the numbers it ran under, about
// 50 bytes a job), so that a resumed run can match its jobs by what they
// run (see Skipper).
type Record struct {
	ended     bitset // a line exists for the job
	succeeded bitset // a line with Exitval 0 and Signal 0 exists
	Malformed int    // lines that were skipped as malformed, the torn one not counted
	Torn      *Torn  // the last line, which had no newline and was ignored; nil if none

	// Misfits counts the records whose Command does not fit the
	// skeleton Load or Open was given (see Fits); Misfit is the first
	// of them.
	Misfits int
	Misfit  *Entry

	skeleton []string
	cmds     commands
	maxSeq   int64
}

// Load reads the joblog at path. A missing file is an empty record, so the
// first run of a resumable command needs no special case. Malformed lines
// are counted in Record.Malformed and otherwise ignored, so those jobs run
// again. A last line without a newline (a crash or a full disk cut its
// write off) is no record either: it is returned in Record.Torn. A line
// longer than MaxReadLine fails the load with an error wrapping
// ErrLineTooLong, since skipping it might run a finished job again.
//
// Load takes no lock; a log that another run is writing may end in a line
// that is being written, which Load reports as Torn. Open, with
// Options.Resume, reads the log under its lock.
func Load(path string) (*Record, error) {
	return LoadSkeleton(path, nil)
}

// LoadSkeleton is Load that also counts the records whose Command does not
// fit skeleton (Record.Misfits; none when skeleton is nil), as Open does
// with Options.Skeleton.
func LoadSkeleton(path string, skeleton []string) (*Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Record{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("joblog: %w", err)
	}
	defer f.Close()
	return readRecord(f, skeleton)
}

// readRecord reads a Record from r, as Load describes.
func readRecord(r io.Reader, skeleton []string) (*Record, error) {
	rec := &Record{skeleton: skeleton}
	for e, err := range Entries(r) {
		var torn *Torn
		switch {
		case errors.As(err, &torn):
			rec.Torn = torn
		case errors.Is(err, ErrMalformed):
			rec.Malformed++
		case errors.Is(err, ErrLineTooLong):
			return nil, fmt.Errorf("joblog: %w", err)
		case err != nil:
			return nil, err
		default:
			rec.add(e)
		}
	}
	return rec, nil
}

// add records e.
func (r *Record) add(e Entry) {
	r.ended.set(e.Seq)
	if e.Succeeded() {
		r.succeeded.set(e.Seq)
	}
	r.maxSeq = max(r.maxSeq, e.Seq)
	r.cmds.add(e.Command, e.Seq, e.Succeeded())
	if r.skeleton != nil && !Fits(e.Command, r.skeleton) {
		if r.Misfits == 0 {
			r.Misfit = &e
		}
		r.Misfits++
	}
}

// Ended reports whether the log has a line for job seq, whatever its status
// (GNU parallel's --resume skips these).
func (r *Record) Ended(seq int64) bool { return r.ended.has(seq) }

// Succeeded reports whether the log has a successful line for job seq
// (--resume-failed skips only these).
func (r *Record) Succeeded(seq int64) bool { return r.succeeded.has(seq) }

type bitset []uint64

func (b *bitset) set(i int64) {
	if i < 0 {
		return
	}
	w := int(i / 64)
	if w >= len(*b) {
		*b = append(*b, make([]uint64, w-len(*b)+1)...)
	}
	(*b)[w] |= 1 << (uint(i) % 64)
}

func (b bitset) has(i int64) bool {
	if i < 0 || int(i/64) >= len(b) {
		return false
	}
	return b[i/64]&(1<<(uint(i)%64)) != 0
}
