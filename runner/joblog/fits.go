package joblog

import "strings"

// Fits reports whether column, a joblog's Command column as read, could
// have been written for a command whose every expansion holds the pieces
// of skeleton in order, with anything between two of them (see
// template.Template.Skeleton): the first piece starts it, the last ends
// it, each piece once, without overlap. The pieces are compared as a
// Writer writes them, tabs and newlines escaped. A column the Writer cut
// (longer than its line) is compared up to its cut only.
func Fits(column string, skeleton []string) bool {
	if len(skeleton) == 0 {
		return true
	}
	if keep, _, ok := cutColumn(column); ok {
		return fitsPrefix(column[:keep], skeleton)
	}
	first := escaper.Replace(skeleton[0])
	if len(skeleton) == 1 {
		return column == first
	}
	last := escaper.Replace(skeleton[len(skeleton)-1])
	if len(column) < len(first)+len(last) || !strings.HasPrefix(column, first) || !strings.HasSuffix(column, last) {
		return false
	}
	rest := column[len(first) : len(column)-len(last)]
	for _, p := range skeleton[1 : len(skeleton)-1] {
		i := strings.Index(rest, escaper.Replace(p))
		if i < 0 {
			return false
		}
		rest = rest[i+len(escaper.Replace(p)):]
	}
	return true
}

// fitsPrefix reports whether prefix, the start of a column, could start a
// column that Fits skeleton: each whole piece found in order, and the
// first piece, or as much of it as prefix holds, at its start.
func fitsPrefix(prefix string, skeleton []string) bool {
	first := escaper.Replace(skeleton[0])
	if len(prefix) <= len(first) {
		return strings.HasPrefix(first, prefix)
	}
	if !strings.HasPrefix(prefix, first) {
		return false
	}
	rest := prefix[len(first):]
	for _, p := range skeleton[1:] {
		p = escaper.Replace(p)
		i := strings.Index(rest, p)
		if i < 0 {
			return true // the piece may lie beyond the cut
		}
		rest = rest[i+len(p):]
	}
	return true
}
