//go:build !linux

package memory

import (
	"context"
	"errors"
)

// Run guards the cgroup until ctx ends; without Linux's cgroups there is
// none, and it returns errors.ErrUnsupported.
func (g *Guard) Run(context.Context) error { return errors.ErrUnsupported }
