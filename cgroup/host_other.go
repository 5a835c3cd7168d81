//go:build !linux

package cgroup

import "errors"

// haveCgroups is false: a live Read returns noCgroups and never reaches
// the two functions below, which exist so the portable code compiles.
const haveCgroups = false

func liveAffinity(int) (int, error) { return 0, errors.ErrUnsupported }

func hostMode() string { return "unavailable" }
