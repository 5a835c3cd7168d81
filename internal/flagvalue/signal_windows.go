package flagvalue

import "syscall"

// signalNumber: Windows has no signals to send to a job; --termseq is
// rejected there.
func signalNumber(name string) (syscall.Signal, bool) {
	switch name {
	case "SIGKILL":
		return syscall.SIGKILL, true
	case "SIGTERM":
		return syscall.SIGTERM, true
	}
	return 0, false
}
