package runhook

import (
	"strconv"
	"syscall"
)

// signalName is sig's number.
func signalName(sig syscall.Signal) string { return strconv.Itoa(int(sig)) }
