package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ration-run/ration/limits"
)

// sizeFlag is a pflag.Value for byte sizes ("100MiB", "1GiB", "512M",
// plain bytes; see limits.ParseSize). Shared by the limits and run
// subcommands so both accept the same sizes.
type sizeFlag int64

// Set parses s with limits.ParseSize. pflag puts `invalid argument "s"
// for "--flag" flag: ` before its error, so Set leaves out ParseSize's
// own `invalid size "s": `.
func (f *sizeFlag) Set(s string) error {
	n, err := limits.ParseSize(s)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("invalid size %q: ", s)))
	}
	*f = sizeFlag(n)
	return nil
}

// String renders the size in bytes, "0" when unset.
func (f *sizeFlag) String() string {
	if f == nil {
		return "0"
	}
	return formatInt(int64(*f))
}

// Type names the value in pflag's usage text.
func (f *sizeFlag) Type() string { return "size" }
