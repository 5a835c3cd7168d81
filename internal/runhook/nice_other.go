//go:build !linux

package runhook

// NiceSupported reports whether Attempt.Nice can be honoured here: not
// outside Linux, where niceness is the whole process's (ration run
// rejects --nice there).
const NiceSupported = false
