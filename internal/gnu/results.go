package gnu

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ration-run/ration/internal/gnuinput"
)

// ResultsDir is the directory of a job's --results files, as GNU parallel
// names it: for every field of every argument, the source's number (or its
// --header name) and the value, with \ / tab and NUL escaped. As GNU
// parallel, the fields of each argument come in the order of their names,
// numerically first, then by bytes (HeaderOrder): with --header the
// names need not be in column order.
func ResultsDir(root string, args []gnuinput.Arg, names []string) string {
	parts := []string{root}
	for _, a := range args {
		type pair struct{ name, v string }
		pairs := make([]pair, len(a))
		for i, v := range a {
			name := strconv.Itoa(i + 1)
			if i < len(names) && names[i] != "" {
				name = names[i]
			}
			v = strings.ReplaceAll(v, `\`, `\\`)
			v = strings.ReplaceAll(v, "\t", `\t`)
			v = strings.ReplaceAll(v, "\x00", `\0`)
			v = strings.ReplaceAll(v, "/", `\_`)
			pairs[i] = pair{name, v}
		}
		slices.SortStableFunc(pairs, func(x, y pair) int { return HeaderOrder(x.name, y.name) })
		for _, p := range pairs {
			parts = append(parts, p.name, p.v)
		}
	}
	return filepath.Join(parts...)
}

// perlNumber is the leading number of a string, as Perl reads one where a
// number is expected ("10x" is 10, "abc" 0, "inf" +Inf, "nan" NaN).
var perlNumber = regexp.MustCompile(`^[ \t\n\r\f\v]*([+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:inf(?:inity)?|nan)))`)

// HeaderOrder compares two --results names as GNU parallel sorts its
// headers: numerically (Perl's <=>), then, when equal or not comparable
// (NaN), by bytes (cmp).
func HeaderOrder(a, b string) int {
	num := func(s string) float64 {
		m := perlNumber.FindStringSubmatch(s)
		if m == nil {
			return 0
		}
		f, _ := strconv.ParseFloat(m[1], 64) // a syntax the pattern took; too big is ±Inf, as in Perl
		return f
	}
	x, y := num(a), num(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return strings.Compare(a, b)
}

// CreateResults makes dir, writes the job number seq into paths[2] (no
// newline, as GNU parallel) and creates paths[0] and paths[1], truncated,
// for the job's stdout and stderr.
func CreateResults(dir string, paths [3]string, seq int64) ([2]*os.File, error) {
	var files [2]*os.File
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return files, err
	}
	if err := os.WriteFile(paths[2], []byte(strconv.FormatInt(seq, 10)), 0o644); err != nil {
		return files, err
	}
	for i := range 2 {
		f, err := os.Create(paths[i])
		if err != nil {
			if i == 1 {
				files[0].Close()
			}
			return files, err
		}
		files[i] = f
	}
	return files, nil
}
