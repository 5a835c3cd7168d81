package cli

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/ration-run/ration/limits"
)

// CheckJobs returns the -j value in force, the flag's or else
// RATION_JOBS, after checking it with the parser the limits decision
// uses (limits.CheckJobs, no I/O). The error names the flag or the
// variable.
func CheckJobs(flag string, getenv func(string) string) (spec string, err error) {
	spec, name := flag, "--jobs"
	if spec == "" {
		spec, name = getenv("RATION_JOBS"), "RATION_JOBS"
	}
	if spec == "" {
		return "", nil
	}
	if err := limits.CheckJobs(spec); err != nil {
		if name == "--jobs" {
			// -j also takes a FILE holding the value (GNU parallel's);
			// one that exists was read before, so this one does not.
			err = fmt.Errorf("%q is not a whole number >= 1, +N, -N, a percentage like 50%% or an existing file holding one", spec)
		}
		return "", FlagErr(name, err)
	}
	return spec, nil
}

// CheckFSRoot fails unless the --fs-root directory, if any, is one.
func CheckFSRoot(root string) error {
	if root == "" {
		return nil
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return fmt.Errorf("--fs-root %s: not a directory", root)
	}
	return nil
}

// JobsSpecRE matches what -j takes as a value rather than a file name:
// GNU parallel's +N, -N, N%, N and ration's checks of them.
var JobsSpecRE = regexp.MustCompile(`^\s*([+-]?[0-9]+|[0-9]*\.?[0-9]*%)\s*$`)

// IsJobsFile reports whether the -j value v is GNU parallel's -j FILE: no
// number, and the name of a regular file.
func IsJobsFile(v string) bool {
	if v == "" || JobsSpecRE.MatchString(v) {
		return false
	}
	st, err := os.Stat(v)
	return err == nil && st.Mode().IsRegular()
}

// ReadJobsFile reads -j FILE's value: the file's text, as -j takes it,
// where 0 is as many jobs as the limits allow (as -j 0).
func ReadJobsFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", FlagErr("--jobs", UnwrapPathErr(err))
	}
	spec := strings.TrimSpace(string(data))
	if spec == "0" {
		spec = JobsZero
	}
	if err := limits.CheckJobs(spec); err != nil {
		return "", FlagErr("--jobs", fmt.Errorf("%s: %w", path, err))
	}
	return spec, nil
}

// UnwrapPathErr is err without the *os.PathError around it: the path is
// named by the message around it already.
func UnwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// JobsZero is the -j value of -j 0, GNU parallel's "as many as
// possible": 250 job slots, about what GNU parallel reaches with the usual
// limit of 1024 open files. A job still starts only while the memory
// admission lets it (as with any -j N), so the slots bound the processes
// and the memory budget bounds what they hold.
const JobsZero = "250"

// JobsZeroReason is the limits decision's reason for -j 0, which it
// decided as -j JobsZero.
func JobsZeroReason(reason string) string {
	return strings.Replace(reason, "-j "+JobsZero+" given",
		"-j 0 given (as many as possible: "+JobsZero+" slots, as GNU parallel; memory admission still applies)", 1)
}
