//go:build !unix

package runcmd

import "os"

// closedAtStart reports whether f was closed when ration started; not
// known here.
func closedAtStart(*os.File) bool { return false }
