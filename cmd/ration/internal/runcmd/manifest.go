package runcmd

import (
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/runner/input"
)

// manifestShard is the input of `ration run --manifest FILE`: the whole
// manifest, or with a shard (--shard, RATION_SHARD_COUNT) only the
// records of that shard's byte range (input.Manifest), which replaces the
// hash of each input: every input of the range is the shard's.
func manifestShard(cfg *runConfig, in *inputPlan) input.Seq {
	sep := byte('\n')
	if in.delim == "\x00" {
		sep = 0
	}
	index, count := 0, 1
	if cfg.Shard.Count > 1 {
		index, count = cfg.Shard.Index, cfg.Shard.Count
		cfg.GNU.InShard = func(gnuinput.Arg) bool { return true }
	}
	return input.Manifest(in.manifest, sep, index, count)
}
