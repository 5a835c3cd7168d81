package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
)

// Procs returns the IDs of the processes in the cgroup directory dir and
// in every cgroup below it (cgroup.procs of each, v1 or v2), the processes
// whose memory a limit on dir counts. A cgroup removed during the walk is
// skipped. It returns an error when dir's own cgroup.procs cannot be read
// or a line of one is not a process ID.
func Procs(dir string) ([]int, error) {
	var pids []int
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		data, err := readFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			if path != dir && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if pids, err = appendProcs(pids, data); err != nil {
			return fmt.Errorf("cgroup: %s: %w", filepath.Join(path, "cgroup.procs"), err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cgroup: processes of %s: %w", dir, err)
	}
	return pids, nil
}

// appendProcs appends the process IDs of a cgroup.procs file, one per
// line, to pids.
func appendProcs(pids []int, data []byte) ([]int, error) {
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		pid, err := strconv.Atoi(line)
		if err != nil || pid <= 0 {
			return pids, fmt.Errorf("not a process ID: %q", line)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}
