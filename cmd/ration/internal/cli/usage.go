package cli

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// ExitUsage is the exit status for a usage or input error, as in GNU parallel.
const ExitUsage = 255

// UsageError is an error in how ration was called: a bad flag value, a
// bad environment variable, flags that exclude each other. Every error of
// the parse and plan steps is one, and exits with ExitUsage. Flag names
// the flag or variable at fault ("" when none does, as for a missing
// command).
type UsageError struct {
	Flag string
	msg  string // the whole message, when err is nil
	err  error  // a library's error about the flag's value
}

// FlagErr returns the usage error "NAME: ERR" for the value of the flag
// or environment variable name that a library rejected with err.
func FlagErr(name string, err error) error { return &UsageError{Flag: name, err: err} }

// FlagMsg returns a usage error about the flag name whose message, msg,
// says itself which flags are at fault ("--bar and --no-bar cannot be
// combined").
func FlagMsg(name, msg string) error { return &UsageError{Flag: name, msg: msg} }

func (e *UsageError) Error() string {
	if e.err != nil {
		return e.Flag + ": " + e.err.Error()
	}
	return e.msg
}

func (e *UsageError) Unwrap() error { return e.err }

// Fail prints err as one line after the subcommand's name and returns the
// usage exit status: parse, plan and wiring errors of a subcommand are all
// errors in how it was called, or in its input, as in GNU parallel.
func Fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", cmd, OneLine(plainNumErr(err.Error())))
	return ExitUsage
}

// strconvErr is the Go-internal part of pflag's message for a number it
// could not parse: `strconv.ParseInt: parsing "999...": `.
var strconvErr = regexp.MustCompile(`strconv\.Parse\w+: parsing "[^"]*": `)

// plainNumErr drops strconv's own words from a message about a number
// (`invalid argument "99999999999999999999" for "--retries" flag: value
// out of range`), which name Go functions rather than the problem.
func plainNumErr(s string) string { return strconvErr.ReplaceAllString(s, "") }

func OneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// WithoutPrefix is err without the package prefix ("worker: ") that its
// message starts with, for a message whose own prefix (a flag) already
// names that: "--worker: exec: ...", not "--worker: worker: exec: ...".
// errors.Is and errors.As still see err.
func WithoutPrefix(err error, prefix string) error {
	msg, ok := strings.CutPrefix(err.Error(), prefix)
	if !ok {
		return err
	}
	return &prefixless{msg, err}
}

type prefixless struct {
	msg string
	err error
}

func (e *prefixless) Error() string { return e.msg }
func (e *prefixless) Unwrap() error { return e.err }
