package joblog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Record is what a joblog says about which jobs ended, for --resume and
// --resume-failed. It keeps two bits per job number, so the record of a
// million jobs takes a quarter of a megabyte.
type Record struct {
	ended     bitset // a line exists for the job
	succeeded bitset // a line with Exitval 0 and Signal 0 exists
	Malformed int    // lines that were skipped as malformed
}

// Load reads the joblog at path. A missing file is an empty record, so the
// first run of a resumable command needs no special case. Malformed lines
// (a log cut off mid-line by a crash) are counted in Record.Malformed and
// otherwise ignored, so those jobs run again.
func Load(path string) (*Record, error) {
	rec := &Record{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return nil, fmt.Errorf("joblog: %w", err)
	}
	defer f.Close()
	for e, err := range Entries(f) {
		if errors.Is(err, ErrMalformed) {
			rec.Malformed++
			continue
		}
		if err != nil {
			return nil, err
		}
		rec.Add(e)
	}
	return rec, nil
}

// Add records e.
func (r *Record) Add(e Entry) {
	r.ended.set(e.Seq)
	if e.Succeeded() {
		r.succeeded.set(e.Seq)
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
