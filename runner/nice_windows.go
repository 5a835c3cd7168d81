package runner

// NiceSupported reports whether Attempt.Nice can be honoured here: not on
// Windows (ration run rejects --nice there).
const NiceSupported = false
