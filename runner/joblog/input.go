package joblog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrSameFile is wrapped by the errors of CheckNotInput and Open when the
// joblog is one of the run's inputs: writing the log would truncate the
// input before it was read, or append records to it while it is read.
var ErrSameFile = errors.New("the joblog is an input of the run")

// CheckNotInput returns an error wrapping ErrSameFile if the joblog at
// path is the same file as one of inputs, compared by device and inode
// (os.SameFile), so paths that differ in text (a symlink, ./, a hard link)
// are caught. An input "-" is stdin. A joblog that does not exist yet, or
// that is not a regular file (/dev/stdout, a FIFO), matches no input; an
// input that cannot be stat'ed is skipped (opening it will fail on its
// own).
//
// The caller calls it before it opens or truncates anything, then passes
// the same inputs in Options.Inputs: Open checks again on the file it
// opened and locked, before it truncates, which also covers a file
// replaced between the two checks.
func CheckNotInput(path string, inputs []string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("joblog: %w", err)
	}
	return checkNotInput(path, fi, inputs)
}

// checkNotInput is CheckNotInput for the joblog path whose FileInfo is log.
func checkNotInput(path string, log fs.FileInfo, inputs []string) error {
	if !log.Mode().IsRegular() {
		return nil
	}
	for _, in := range inputs {
		var fi fs.FileInfo
		var err error
		if in == "-" {
			fi, err = os.Stdin.Stat()
		} else {
			fi, err = os.Stat(in)
		}
		if err == nil && os.SameFile(log, fi) {
			return fmt.Errorf("joblog: %s is the same file as input %s: %w", path, in, ErrSameFile)
		}
	}
	return nil
}
