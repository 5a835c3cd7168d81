package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ration-run/ration/limits"
)

// SizeFlag is a pflag.Value for byte sizes ("100MiB", "1GiB", "512M",
// plain bytes; see limits.ParseSize). Shared by the limits and run
// subcommands so both accept the same sizes.
type SizeFlag int64

// Set parses s with limits.ParseSize. pflag puts `invalid argument "s"
// for "--flag" flag: ` before its error, so Set leaves out ParseSize's
// own `invalid size "s": `.
func (f *SizeFlag) Set(s string) error {
	n, err := limits.ParseSize(s)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("invalid size %q: ", s)))
	}
	*f = SizeFlag(n)
	return nil
}

// String renders the size in bytes, "0" when unset.
func (f *SizeFlag) String() string {
	if f == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*f), 10)
}

// Type names the value in pflag's usage text.
func (f *SizeFlag) Type() string { return "size" }

// MemFlag is --mem-per-job: a size, or "auto" to learn the memory of one
// job from the peak RSS of finished jobs.
type MemFlag struct {
	Size SizeFlag
	Auto bool
}

// Set accepts "auto" or a size (see sizeFlag).
func (f *MemFlag) Set(s string) error {
	if strings.EqualFold(strings.TrimSpace(s), "auto") {
		f.Size, f.Auto = 0, true
		return nil
	}
	f.Auto = false
	return f.Size.Set(s)
}

// String renders "auto" or the size in bytes.
func (f *MemFlag) String() string {
	if f.Auto {
		return "auto"
	}
	return f.Size.String()
}

// Type names the value in pflag's usage text.
func (f *MemFlag) Type() string { return "size|auto" }
