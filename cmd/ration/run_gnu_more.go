package main

import (
	"github.com/spf13/pflag"
)

// gnuMoreFlags are GNU parallel 20221122's options that cancel or
// override others (branch gnuflags).
type gnuMoreFlags struct {
	// noKeepOrder is --no-keep-order (--nok, --no-k): it cancels -k
	// wherever it is, as GNU's "no-* overrides *".
	noKeepOrder bool
	// silent is --silent: GNU's default, it cancels -v wherever it is
	// (not -t).
	silent bool
	// plain is --plain: -J profiles and $PARALLEL are not read (gnuArgs).
	plain bool
	// gnu is --gnu, a no-op (GNU's override of the retired --tollef).
	gnu bool
}

// addGNUMoreFlags adds gnuMoreFlags' flags to fs.
func addGNUMoreFlags(fs *pflag.FlagSet, f *runFlags) {
	m := &f.more
	fs.BoolVar(&m.noKeepOrder, "no-keep-order", false, "cancel -k, wherever it is (GNU parallel's --no-keep-order, --nok, --no-k: for a -k from a profile or $PARALLEL)")
	fs.BoolVar(&m.silent, "silent", false, "cancel -v, wherever it is (GNU parallel's --silent; not printing the commands is the default)")
	fs.BoolVar(&m.plain, "plain", false, "ignore -J/--profile and $PARALLEL (GNU parallel's --plain)")
	fs.BoolVar(&m.gnu, "gnu", false, "accepted for GNU parallel's sake (behave like GNU parallel)")
}

// gnuMoreParsed applies the flags that cancel others, after parsing.
func gnuMoreParsed(f *runFlags) {
	if f.more.noKeepOrder {
		f.keepOrder = false
	}
	if f.more.silent {
		f.gnu.printCommands = false
	}
}
