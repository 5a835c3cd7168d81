//go:build !linux

package gnurun

import "errors"

// GateSupported reports whether StartGate can read the machine here: not
// outside Linux (ration run rejects --load, --noswap and --memfree there).
const GateSupported = false

// readMachine: no /proc to read.
func readMachine(string, bool) (machine, error) {
	return machine{}, errors.New("the start gate reads /proc: Linux only")
}
