package runcmd

import (
	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/runner"
)

const partShard = "--pipepart with --shard or RATION_SHARD_COUNT needs --block SIZE: parts sized by the job slots follow each run's -j, so the shards would overlap and miss parts"

const pipeR = "-r with --pipe is not supported (GNU parallel removes blank lines from the stream): remove them first, grep -v '^[[:space:]]*$'"

const robinShard = "--round-robin cannot be combined with --shard or RATION_SHARD_COUNT: its jobs are streams that take whichever blocks come, so no shard owns a block"

// planCasesGNUPipe are the plan rows of --pipe's modes.
func planCasesGNUPipe() []planCase {
	c := func(args ...string) []string { return args }
	pipe := func(o gnuinput.BlockOptions) func(p *runPlan) {
		return func(p *runPlan) {
			p.cfg.GNU.Pipe, p.cfg.GNU.Batch.MaxArgs = true, 1
			p.input.pipe = &o
		}
	}
	part := func(path string, o gnuinput.PartOptions, perSlot int64) func(p *runPlan) {
		return func(p *runPlan) {
			p.cfg.Command, p.cfg.GNU.Pipe, p.cfg.GNU.Batch.MaxArgs = []string{"wc"}, true, 1
			p.input.kind, p.input.sources = inputSources, argFiles(path)
			p.input.pipeMode = &pipeModePlan{path: path, part: o, perSlot: perSlot}
		}
	}
	robin := func(o gnuinput.BlockOptions) func(p *runPlan) {
		return func(p *runPlan) {
			pipe(o)(p)
			p.input.pipeMode = &pipeModePlan{roundRobin: true}
		}
	}
	return []planCase{
		// --cat and --fifo: {} names a file holding the block.
		{args: c("--cat", "wc", "{}"), want: func(p *runPlan) {
			pipe(gnuinput.BlockOptions{RecEnd: "\n"})(p)
			p.cfg.Command, p.cfg.GNU.PipeArg, p.input.pipeMode = []string{"wc", "{}"}, true, &pipeModePlan{file: "cat"}
		}},
		{args: c("--pipe", "--fifo", "-N2", "wc"), want: func(p *runPlan) {
			pipe(gnuinput.BlockOptions{RecEnd: "\n", Records: 2})(p)
			p.cfg.Command, p.cfg.GNU.PipeArg, p.input.pipeMode = []string{"wc"}, true, &pipeModePlan{file: "fifo"}
		}},
		{args: c("--pipepart", "-a", "big", "--cat", "wc"), want: func(p *runPlan) {
			part("big", gnuinput.PartOptions{RecEnd: "\n"}, 10)(p)
			p.cfg.GNU.PipeArg, p.input.pipeMode.file = true, "cat"
		}},
		{args: c("--cat", "--fifo", "wc"), err: "--cat and --fifo cannot be combined (GNU parallel neither)", flag: "--cat"},
		{args: c("--cat", "--round-robin", "wc"), err: "--cat and --fifo with --round-robin are not supported", flag: "--cat"},
		{args: c("--fifo", "--retries", "3", "wc"), err: "--cat and --fifo cannot be combined with --retries: the block is given once", flag: "--cat"},

		// --round-robin: -j streams for the whole input.
		{args: c("--pipe", "--round-robin", "echo"), want: robin(gnuinput.BlockOptions{RecEnd: "\n"})},
		{args: c("--pipe", "--roundrobin", "-N50", "echo"), want: robin(gnuinput.BlockOptions{RecEnd: "\n", Records: 50})},
		{args: c("--spreadstdin", "--round", "-L1000", "echo"), want: robin(gnuinput.BlockOptions{RecEnd: "\n", Lines: 1000})},
		{args: c("--round-robin", "echo"), err: "--round-robin needs --pipe or --pipepart (GNU parallel 20221122 ignores it without them)", flag: "--round-robin"},
		{args: c("--pipe", "--round-robin", "--retries", "2", "echo"), err: "--round-robin cannot be combined with --retries (GNU parallel neither): a block a job took is not given again", flag: "--round-robin"},
		{args: c("--pipe", "--round-robin", "--header", ":", "echo"), err: "--header with --round-robin is not supported", flag: "--round-robin"},
		// A shard of --round-robin's streams hung (the streams it did not
		// run never took a block) or ran most of the input in every shard.
		{args: c("--pipe", "--round-robin", "--shard", "0/2", "wc"), err: robinShard, flag: "--round-robin"},
		{args: c("--pipe", "--round-robin", "wc"), env: map[string]string{"RATION_SHARD_COUNT": "3", "JOB_COMPLETION_INDEX": "2"}, err: robinShard, flag: "--round-robin"},
		{args: c("--pipepart", "-a", "big", "--round-robin", "--block", "1M", "--shard", "1/2", "wc"), err: robinShard, flag: "--round-robin"},
		{args: c("--pipe", "--round-robin", "--shard", "0/1", "wc"), want: func(p *runPlan) {
			robin(gnuinput.BlockOptions{RecEnd: "\n"})(p)
			p.cfg.Command, p.cfg.Shard = []string{"wc"}, runner.Shard{Index: 0, Count: 1}
		}},

		{args: c("--pipe", "--regexp", "--recend", ",_+", "-N1", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: ",_+", Regexp: true, Records: 1})},
		{args: c("--pipe", "--regex", "--recstart", ">", "echo"), want: pipe(gnuinput.BlockOptions{RecStart: ">", Regexp: true})},
		{args: c("--pipe", "--rrs", "--recend", ",", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: ",", RemoveRecSep: true})},
		{args: c("--pipe", "--remove-rec-sep", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: "\n", RemoveRecSep: true})},
		{args: c("--pipe", "--removerecsep", "--regexp", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: "\n", RemoveRecSep: true, Regexp: true})},
		{args: c("--pipe", "--regexp", "--recend", "(", "echo"), err: "--recend: error parsing regexp: missing closing ): `(`", flag: "--regexp"},
		{args: c("--pipe", "--recend", "(", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: "("})},
		// -r took no blank line out of --pipe's stream (GNU parallel does).
		{args: c("--pipe", "-r", "wc"), err: pipeR, flag: "--pipe"},
		{args: c("--pipepart", "-a", "big", "--no-run-if-empty", "wc"), err: pipeR, flag: "--pipe"},
		{args: c("--regexp", "echo"), err: "--regexp and --rrs need --pipe", flag: "--regexp"},
		{args: c("--rrs", "echo"), err: "--regexp and --rrs need --pipe", flag: "--regexp"},

		// --header with --pipe: put in front of every block.
		{args: c("--pipe", "--header", ":", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: "\n", Header: `(.*\n)`})},
		{args: c("--pipe", "--header", "2", "-N3", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: "\n", Header: `(.*\n)(.*\n)`, Records: 3})},
		{args: c("--pipe", "--header", ".{4}", "--block", "3", "--recend", "", "echo"), want: pipe(gnuinput.BlockOptions{Size: 3, Header: `.{4}`})},
		{args: c("--pipe", "--header", "(", "echo"), err: "--header: error parsing regexp: missing closing ): `(`", flag: "--header"},

		// -L with --pipe: records of N lines.
		{args: c("--pipe", "-L75", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: "\n", Lines: 75})},
		{args: c("--pipe", "--max-lines", "2", "--block", "1k", "echo"), want: pipe(gnuinput.BlockOptions{RecEnd: "\n", Lines: 2, Size: 1000})},
		{args: c("--pipe", "-L0", "echo"), err: "-L0 gives a record no lines; with --pipe, -L must be at least 1", flag: "--pipe"},

		// --pipepart: a file cut into parts by seeking.
		{args: c("--pipepart", "-a", "big", "wc"), want: part("big", gnuinput.PartOptions{RecEnd: "\n"}, 10)},
		{args: c("--pipe-part", "--block", "3m", "wc", "::::", "big"), want: func(p *runPlan) {
			part("big", gnuinput.PartOptions{RecEnd: "\n", Size: 3000000}, 0)(p)
			p.input.sources = []sourcePlan{{name: ":::: big", path: "big"}}
		}},
		{args: c("--pipepart", "-a", "big", "--block", "-1", "--regexp", "--recstart", "@", "--header", ":", "wc"),
			want: part("big", gnuinput.PartOptions{RecStart: "@", Regexp: true, Header: `(.*\n)`}, 1)},
		{args: c("--pipepart", "wc"), err: "--pipepart cuts one file, given with -a FILE or :::: FILE (not stdin, not :::)", flag: "--pipepart"},
		{args: c("--pipepart", "-a", "-", "wc"), err: "--pipepart cuts one file, given with -a FILE or :::: FILE (not stdin, not :::)", flag: "--pipepart"},
		{args: c("--pipepart", "wc", ":::", "a"), err: "--pipepart cuts one file, given with -a FILE or :::: FILE (not stdin, not :::)", flag: "--pipepart"},
		{args: c("--pipepart", "-a", "f", "-N1", "wc"), err: "--pipepart cannot be combined with -N or -L (GNU parallel neither): --recend and --recstart say where records end", flag: "--pipepart"},
		{args: c("--pipepart", "-a", "f", "--rrs", "wc"), err: "--rrs does not apply to --pipepart (GNU parallel 20221122 ignores it there)", flag: "--pipepart"},
		{args: c("--pipepart", "-a", "big", "--round-robin", "--block", "1M", "wc"), want: part("big", gnuinput.PartOptions{RecEnd: "\n"}, 1)},
		{args: c("--pipepart", "-a", "f", "--block", "-x", "wc"), err: "--block: " + errOf(gnuinput.ParseBlockSize("x")), flag: "--block"},
		// Parts sized by the job slots differ with each run's -j: shards
		// of runs whose -j differ overlapped and missed parts.
		{args: c("--pipepart", "-a", "big", "--shard", "0/2", "wc"), err: partShard, flag: "--pipepart"},
		{args: c("--pipepart", "-a", "big", "--block", "-3", "wc"), env: map[string]string{"RATION_SHARD_COUNT": "2", "JOB_COMPLETION_INDEX": "1"}, err: partShard, flag: "--pipepart"},
		{args: c("--pipepart", "-a", "big", "--block", "1M", "--shard", "1/2", "wc"), want: func(p *runPlan) {
			part("big", gnuinput.PartOptions{RecEnd: "\n", Size: 1 << 20}, 0)(p)
			p.cfg.Shard = runner.Shard{Index: 1, Count: 2}
		}},
	}
}
