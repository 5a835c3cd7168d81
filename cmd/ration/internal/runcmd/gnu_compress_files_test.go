package runcmd

import (
	"slices"
	"testing"

	"github.com/ration-run/ration/internal/gnuinput"
)

// planCasesCompressFiles are the plan rows of --compress and of GNU's --files
// with --pipe and --pipepart (planCases appends them).
func planCasesCompressFiles() []planCase {
	c := func(args ...string) []string { return args }
	pipe := func(p *runPlan) {
		p.cfg.GNU.Pipe, p.cfg.GNU.Batch.MaxArgs = true, 1
		p.input.pipe = &gnuinput.BlockOptions{RecEnd: "\n"}
	}
	return []planCase{
		{args: c("--compress", "echo"), want: func(p *runPlan) { p.cfg.GNU.Exec.Compress = true }},
		{args: c("--pipe", "--compress", "-k", "grep", "x"), want: func(p *runPlan) {
			pipe(p)
			p.cfg.GNU.Exec.Compress, p.cfg.KeepOrder, p.cfg.Command = true, true, []string{"grep", "x"}
		}},
		{args: c("--compress-program", "lz4", "echo"),
			err: "unknown flag: --compress-program (GNU parallel's --compress-program is not supported: ration's --compress deflates the output it spills to --tmpdir by itself, with no program to run)"},
		{args: c("--compress", "--decompress-program", "lz4 -dc", "echo"),
			err: "unknown flag: --decompress-program (GNU parallel's --decompress-program is not supported: ration's --compress deflates the output it spills to --tmpdir by itself, with no program to run)"},
		{args: c("--compress", "--output-files", "echo"), flag: "--compress",
			err: "--compress with --files is not supported: GNU parallel writes the kept files compressed, ration would not"},
		// With --pipe a bare --files is GNU's: the inputs are blocks.
		{args: c("--pipe", "--files", "sort"), want: func(p *runPlan) {
			pipe(p)
			p.cfg.GNU.Exec.Files, p.cfg.Command = true, []string{"sort"}
		}},
		{args: c("--files", "--pipe", "sort", "-n"), want: func(p *runPlan) {
			pipe(p)
			p.cfg.GNU.Exec.Files, p.cfg.Command = true, []string{"sort", "-n"}
		}},
		{args: c("--pipepart", "-a", "big", "--files", "sort"), want: func(p *runPlan) {
			p.cfg.Command, p.cfg.GNU.Pipe, p.cfg.GNU.Batch.MaxArgs, p.cfg.GNU.Exec.Files = []string{"sort"}, true, 1, true
			p.input.kind, p.input.sources = inputSources, argFiles("big")
			p.input.pipeMode = &pipeModePlan{path: "big", part: gnuinput.PartOptions{RecEnd: "\n"}, perSlot: 10}
		}},
	}
}

// TestPipeFilesArgs: with --pipe or --pipepart a bare --files among the
// options is GNU's --files (--output-files), wherever it stands among
// them and whatever the command's own options; in the command, or
// without a pipe mode, it stays as it is.
func TestPipeFilesArgs(t *testing.T) {
	for _, tc := range []struct {
		args, want []string
	}{
		{[]string{"--pipe", "--files", "wc", "-l"}, []string{"--pipe", "--output-files", "wc", "-l"}},
		{[]string{"--files", "--pipe", "wc", "-l"}, []string{"--output-files", "--pipe", "wc", "-l"}},
		{[]string{"--pipe", "--files", "-k", "wc", "-l", "--files"}, []string{"--pipe", "--output-files", "-k", "wc", "-l", "--files"}},
		{[]string{"--pipe-part", "-a", "f", "--files", "--", "wc", "--files"}, []string{"--pipe-part", "-a", "f", "--output-files", "--", "wc", "--files"}},
		{[]string{"--spreadstdin", "--files", "wc", "-l"}, []string{"--spreadstdin", "--output-files", "wc", "-l"}},
		{[]string{"--files", "--cat", "wc", "{}"}, []string{"--output-files", "--cat", "wc", "{}"}},
		{[]string{"--pipe", "--", "wc", "--files"}, nil},
		{[]string{"--files", "*.go", "wc", "-l"}, nil},
		{[]string{"--files", "*.go", "--bogus", "wc"}, nil},
	} {
		got, ok := pipeFilesArgs(tc.args)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("pipeFilesArgs(%q) = %q, %v; want %q", tc.args, got, ok, tc.want)
		}
	}
	p, _, err := planOf(t, []string{"--pipe", "--files", "-k", "wc", "-l"}, nil)
	if err != nil || !p.cfg.GNU.Exec.Files || !p.cfg.GNU.Pipe || !p.cfg.KeepOrder || !slices.Equal(p.cfg.Command, []string{"wc", "-l"}) {
		t.Errorf("plan of --pipe --files -k wc -l: %v, files %v, pipe %v, command %q", err, p.cfg.GNU.Exec.Files, p.cfg.GNU.Pipe, p.cfg.Command)
	}
}
