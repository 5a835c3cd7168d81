package input

import (
	"fmt"
	"os"
	"path/filepath"
)

// skipper leaves the run's own output out of the walk (FilesOptions.Skip).
type skipper struct {
	paths []string
	// warned holds the paths already warned about: once each.
	warned map[string]bool
	warn   func(error)
}

// skipped reports whether the entry name at p, which the walk is about to
// take, is one of the paths to skip; the first time, it warns. Only an
// entry named as one of them is stat'ed.
func (s *skipper) skipped(p, name string) bool {
	for _, sp := range s.paths {
		if filepath.Base(sp) != name {
			continue
		}
		a, err := os.Stat(sp)
		if err != nil {
			continue
		}
		b, err := os.Stat(p)
		if err != nil || !os.SameFile(a, b) {
			continue
		}
		if !s.warned[sp] {
			s.warned[sp] = true
			s.warn(&PatternError{Err: fmt.Errorf("left out %s: it is %s, written by this run", p, sp)})
		}
		return true
	}
	return false
}
