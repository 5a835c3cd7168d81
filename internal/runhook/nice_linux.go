package runhook

// NiceSupported reports whether Attempt.Nice can be honoured here: on
// Linux, where a child inherits the niceness of the thread that forks it.
const NiceSupported = true
