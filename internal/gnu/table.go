package gnu

import (
	"fmt"
	"os"
	"strings"
)

// WriteRow writes one row as GNU parallel's combine_ref does: a column
// holding a double quote (doubled), white space, the separator or a NUL
// byte is quoted; an empty one is written empty.
func WriteRow(b *strings.Builder, sep byte, cols []string) {
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(sep)
		}
		quote := strings.ContainsAny(c, "\" \t\n\r\f\v\x00") || strings.IndexByte(c, sep) >= 0
		c = strings.ReplaceAll(c, `"`, `""`)
		if quote {
			b.WriteByte('"')
			b.WriteString(c)
			b.WriteByte('"')
		} else {
			b.WriteString(c)
		}
	}
	b.WriteByte('\n')
}

// EpochMillis writes ms milliseconds as seconds with three decimals.
func EpochMillis(ms int64) string {
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// AppendRows opens path with flag (O_APPEND) and writes rows; when the
// write fails it cuts the file back to its size before, so that a later
// row does not follow a torn one.
func AppendRows(path string, flag int, rows string) error {
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return err
	}
	var size int64
	if fi, serr := f.Stat(); serr == nil {
		size = fi.Size()
	}
	if _, err = f.WriteString(rows); err != nil {
		_ = f.Truncate(size)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
