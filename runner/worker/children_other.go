//go:build !linux

package worker

import "github.com/shirou/gopsutil/v4/process"

// childrenOf returns p's child processes (gopsutil's Children).
func childrenOf(p *process.Process) ([]*process.Process, error) { return p.Children() }
