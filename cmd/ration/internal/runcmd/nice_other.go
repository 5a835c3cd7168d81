//go:build !linux

package runcmd

import "errors"

// ownNice returns ration's niceness; jobs get one on Linux only.
func ownNice() (int, error) { return 0, errors.ErrUnsupported }
