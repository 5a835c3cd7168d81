package flagvalue

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ration-run/ration/runner"
)

// ParseShard parses "I/N" with 0 <= I < N. Its errors do not say
// "shard": the caller names the flag or variable it came from.
func ParseShard(s string) (runner.Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return runner.Shard{}, fmt.Errorf("%q is not I/N", s)
	}
	return NewShard(i, n)
}

// NewShard builds a shard from the index and count as strings (as they
// come from JOB_COMPLETION_INDEX and RATION_SHARD_COUNT).
func NewShard(index, count string) (runner.Shard, error) {
	iv, err := strconv.Atoi(strings.TrimSpace(index))
	if err != nil {
		return runner.Shard{}, fmt.Errorf("%s/%s: index %q is not a whole number", index, count, index)
	}
	nv, err := strconv.Atoi(strings.TrimSpace(count))
	if err != nil {
		return runner.Shard{}, fmt.Errorf("%s/%s: count %q is not a whole number", index, count, count)
	}
	if nv < 1 || iv < 0 || iv >= nv {
		return runner.Shard{}, fmt.Errorf("%s/%s: want 0 <= I < N", index, count)
	}
	return runner.Shard{Index: iv, Count: nv}, nil
}
