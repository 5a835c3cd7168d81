package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ration-run/ration/runner/input"
)

// FilesError returns err, an error of input.Files or one it passed to
// FilesOptions.Warn, in the CLI's words: each *input.PatternError (alone
// or joined) names the flag its pattern came from ("--files P: ...",
// "--exclude: ...", "--files: ..." for the walk's own), and a pattern that
// matched nothing says what --hidden would walk. Other errors are returned
// as they are.
func FilesError(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs := j.Unwrap()
		out := make([]error, len(errs))
		for i, e := range errs {
			out[i] = FilesError(e)
		}
		return errors.Join(out...)
	}
	pe, ok := err.(*input.PatternError)
	if !ok {
		return err
	}
	var b strings.Builder
	switch {
	case pe.Exclude:
		b.WriteString("--exclude: ")
	case pe.Pattern == "":
		b.WriteString("--files: ")
	default:
		fmt.Fprintf(&b, "--files %s: ", pe.Pattern)
	}
	b.WriteString(pe.Err.Error())
	var why []string
	if pe.Hidden > 0 {
		why = append(why, fmt.Sprintf("%d hidden %s not walked (--hidden walks them)", pe.Hidden, paths(pe.Hidden)))
	}
	if pe.Ignored > 0 {
		why = append(why, fmt.Sprintf("%d %s not walked as .gitignore or .ignore says", pe.Ignored, paths(pe.Ignored)))
	}
	if len(why) > 0 {
		b.WriteString("; " + strings.Join(why, ", "))
	}
	return &flagError{msg: b.String(), err: pe}
}

// FilesSeq yields the values of s, and its error through FilesError.
func FilesSeq(s input.Seq) input.Seq {
	return func(yield func(string, error) bool) {
		for v, err := range s {
			if err != nil {
				yield(v, FilesError(err))
				return
			}
			if !yield(v, nil) {
				return
			}
		}
	}
}

// flagError is a library error in the CLI's words.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// paths is "path" or "paths" for n of them.
func paths(n int) string {
	if n == 1 {
		return "path"
	}
	return "paths"
}
