package input

import (
	"fmt"
	"strings"
)

// A PatternError is an error of Files, or one it passes to
// FilesOptions.Warn, that concerns one pattern or the walk as a whole. Its
// message names the pattern but no command-line flag: a CLI that took the
// patterns from flags puts the flag's name in its own message.
type PatternError struct {
	// Pattern is the pattern as given in FilesOptions.Patterns or
	// Excludes; empty when the error is the walk's (an ignore file it could
	// not read, a path of FilesOptions.Skip it left out).
	Pattern string
	// Exclude says Pattern is one of FilesOptions.Excludes.
	Exclude bool
	// Hidden and Ignored count, when Err is ErrNoMatch, the paths the walk
	// of Pattern skipped that match it or may hold a match: hidden ones
	// (FilesOptions.Hidden) and ignored ones (FilesOptions.GitIgnore), the
	// likely reasons it matched nothing.
	Hidden, Ignored int
	// Err is what went wrong: ErrNoMatch, an error wrapping ErrBadPattern,
	// or the error of reading the file system.
	Err error
}

// Error returns "pattern P: " (or "exclude pattern P: ") and Err, with the
// paths skipped when Hidden or Ignored is set; Err alone without a
// Pattern.
func (e *PatternError) Error() string {
	var b strings.Builder
	switch {
	case e.Exclude:
		fmt.Fprintf(&b, "exclude pattern %s: ", e.Pattern)
	case e.Pattern != "":
		fmt.Fprintf(&b, "pattern %s: ", e.Pattern)
	}
	b.WriteString(e.Err.Error())
	var why []string
	if e.Hidden > 0 {
		why = append(why, fmt.Sprintf("%d hidden %s not walked", e.Hidden, paths(e.Hidden)))
	}
	if e.Ignored > 0 {
		why = append(why, fmt.Sprintf("%d %s not walked as .gitignore or .ignore says", e.Ignored, paths(e.Ignored)))
	}
	if len(why) > 0 {
		b.WriteString("; " + strings.Join(why, ", "))
	}
	return b.String()
}

// Unwrap returns Err.
func (e *PatternError) Unwrap() error { return e.Err }

// paths is "path" or "paths" for n of them.
func paths(n int) string {
	if n == 1 {
		return "path"
	}
	return "paths"
}
