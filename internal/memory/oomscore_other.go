//go:build !linux

package memory

// victimScore: there is no oom_score_adj outside Linux.
func victimScore() (int, bool) { return 0, false }

// writeScore is never called outside Linux (victimScore fails).
func writeScore(int, []byte) {}
