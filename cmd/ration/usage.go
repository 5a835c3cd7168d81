package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// usageError is an error in how ration was called: a bad flag value, a
// bad environment variable, flags that exclude each other. Every error of
// the parse and plan steps is one, and exits with exitUsage. Flag names
// the flag or variable at fault ("" when none does, as for a missing
// command).
type usageError struct {
	Flag string
	msg  string // the whole message, when err is nil
	err  error  // a library's error about the flag's value
}

// flagErr returns the usage error "NAME: ERR" for the value of the flag
// or environment variable name that a library rejected with err.
func flagErr(name string, err error) error { return &usageError{Flag: name, err: err} }

// flagMsg returns a usage error about the flag name whose message, msg,
// says itself which flags are at fault ("--bar and --no-bar cannot be
// combined").
func flagMsg(name, msg string) error { return &usageError{Flag: name, msg: msg} }

func (e *usageError) Error() string {
	if e.err != nil {
		return e.Flag + ": " + e.err.Error()
	}
	return e.msg
}

func (e *usageError) Unwrap() error { return e.err }

// fail prints err as one line after the subcommand's name and returns the
// usage exit status: parse, plan and wiring errors of a subcommand are all
// errors in how it was called, or in its input, as in GNU parallel.
func fail(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "%s: %s\n", cmd, oneLine(plainNumErr(err.Error())))
	return exitUsage
}

// strconvErr is the Go-internal part of pflag's message for a number it
// could not parse: `strconv.ParseInt: parsing "999...": `.
var strconvErr = regexp.MustCompile(`strconv\.Parse\w+: parsing "[^"]*": `)

// plainNumErr drops strconv's own words from a message about a number
// (`invalid argument "99999999999999999999" for "--retries" flag: value
// out of range`), which name Go functions rather than the problem.
func plainNumErr(s string) string { return strconvErr.ReplaceAllString(s, "") }

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// withoutPrefix is err without the package prefix ("worker: ") that its
// message starts with, for a message whose own prefix (a flag) already
// names that: "--worker: exec: ...", not "--worker: worker: exec: ...".
// errors.Is and errors.As still see err.
func withoutPrefix(err error, prefix string) error {
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
