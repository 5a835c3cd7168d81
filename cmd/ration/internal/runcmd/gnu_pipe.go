package runcmd

import (
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/spf13/pflag"
)

// gnuBlockFlags are --pipe's flags: stdin cut into blocks of records,
// each one a job's stdin. recEndSet and recStartSet say whether --recend
// and --recstart were given.
type gnuBlockFlags struct {
	pipe                    bool
	block, recEnd, recStart string
	recEndSet, recStartSet  bool
}

// addGNUBlockFlags adds gnuBlockFlags' flags to fs.
func addGNUBlockFlags(fs *pflag.FlagSet, g *gnuBlockFlags) {
	fs.BoolVar(&g.pipe, "pipe", false, "cut stdin into blocks of whole records and give each job one block as its stdin (the command runs as written; -N: records per job)")
	fs.BoolVar(&g.pipe, "spreadstdin", false, "same as --pipe")
	fs.StringVar(&g.block, "block", "", "with --pipe, blocks of about `SIZE` bytes (K, M, G: 1024-based; k, m, g: 1000-based; default 1M)")
	fs.StringVar(&g.block, "block-size", "", "same as --block")
	fs.StringVar(&g.recEnd, "recend", "", "with --pipe, a record ends with `STR` (default \\n; none when only --recstart is given)")
	fs.StringVar(&g.recStart, "recstart", "", "with --pipe, a record starts with `STR` (default none)")
}

// gnuPipeFlags are the flags of GNU parallel's --pipe modes.
type gnuPipeFlags struct {
	// regexp is --regexp: --recend and --recstart are regular
	// expressions; removeRecSep is --rrs.
	regexp, removeRecSep bool
	// pipePart is --pipepart; roundRobin is --round-robin.
	pipePart, roundRobin bool
	// cat and fifo are --cat and --fifo.
	cat, fifo bool
}

// pipeModePlan is how --pipepart cuts its file, or --round-robin's.
type pipeModePlan struct {
	// path is --pipepart's file ("" for --round-robin without it); part
	// says how it is cut, its Size set by wire when perSlot > 0 (--block
	// -N: N parts per job slot, once the jobs are decided).
	path    string
	part    gnuinput.PartOptions
	perSlot int64
	// roundRobin is --round-robin without --pipepart: stdin's blocks
	// (inputPlan.pipe) go to -j streams, one job each.
	roundRobin bool
	// file is "cat" or "fifo" (--cat, --fifo): a job's block or part is
	// written to a temporary file or FIFO whose name {} is, not to its
	// stdin; "" for neither.
	file string
}

// addGNUPipeFlags adds the flags of --pipe's modes to fs.
func addGNUPipeFlags(fs *pflag.FlagSet, f *runFlags) {
	pf := &f.pipe
	fs.BoolVar(&pf.regexp, "regexp", false, "with --pipe, --recend and --recstart are regular expressions (Go RE2 syntax)")
	fs.BoolVar(&pf.regexp, "regex", false, "same as --regexp")
	fs.BoolVar(&pf.removeRecSep, "remove-rec-sep", false, "with --pipe, take --recend and --recstart out of every block (between records, at its start and at its end)")
	fs.BoolVar(&pf.removeRecSep, "removerecsep", false, "same as --remove-rec-sep")
	fs.BoolVar(&pf.removeRecSep, "rrs", false, "same as --remove-rec-sep")
	fs.BoolVar(&pf.pipePart, "pipepart", false, "like --pipe, but cut the file of -a FILE (or :::: FILE) into parts where records end, each part the stdin of a job, read by seeking (--block: the least size of a part; -N: N parts per job; default -10)")
	fs.BoolVar(&pf.pipePart, "pipe-part", false, "same as --pipepart")
	fs.BoolVar(&pf.roundRobin, "round-robin", false, "with --pipe, start -j jobs that run for the whole input, each block going to whichever is ready to take it (with --pipepart: one part per job slot)")
	fs.BoolVar(&pf.roundRobin, "roundrobin", false, "same as --round-robin")
	fs.BoolVar(&pf.roundRobin, "round", false, "same as --round-robin")
	fs.BoolVar(&pf.cat, "cat", false, "with --pipe or --pipepart, write each job's block to a temporary file, {} its name, removed when the job ends (implies --pipe)")
	fs.BoolVar(&pf.fifo, "fifo", false, "with --pipe or --pipepart, give each job its block through a temporary FIFO, {} its name (implies --pipe; a job must open it)")
}

// pipeHeader is GNU parallel's --header with --pipe as a regular
// expression: ":" is one line, a number N is N lines, anything else is a
// regular expression matched at the start of the input.
func pipeHeader(h string) string {
	if h == ":" {
		return `(.*\n)`
	}
	if n, err := strconv.Atoi(h); err == nil && n >= 0 && strings.Trim(h, "0123456789") == "" {
		return strings.Repeat(`(.*\n)`, n)
	}
	return h
}

// planPipe plans --pipe (GNU parallel's): stdin cut into blocks of whole
// records (--block, --recend, --recstart, --regexp; -N: records per job;
// -L: lines per record), each one the stdin of a job that runs the
// command as written, with --header's lines in front and, with --rrs,
// without the record separators; and its modes, --pipepart,
// --round-robin, --cat and --fifo.
func planPipe(p *runPlan, f *runFlags, _ func(string) string) error {
	g, pf := &f.gnu, &f.pipe
	if (pf.cat || pf.fifo) && !pf.pipePart {
		// GNU parallel: --cat and --fifo imply --pipe.
		g.pipe = true
	}
	if !g.pipe && !pf.pipePart {
		return planNoPipe(f)
	}
	if pf.roundRobin && p.cfg.Shard.Count > 1 {
		// A shard would run some of the streams; the others never take
		// their blocks, and the input stalls (planShard comes first).
		return flagMsg("--round-robin", "--round-robin cannot be combined with --shard or RATION_SHARD_COUNT: "+
			"its jobs are streams that take whichever blocks come, so no shard owns a block")
	}
	if err := planPipeChecks(p, f); err != nil {
		return err
	}
	o, err := pipeBlockOptions(f)
	if err != nil {
		return err
	}
	file, err := pipeFileMode(f)
	if err != nil {
		return err
	}
	p.cfg.GNU.PipeArg = file != ""
	if pf.pipePart {
		return pipePartOptions(p, f, o, file)
	}
	if pf.roundRobin {
		switch {
		case f.retries > 1:
			return flagMsg("--round-robin", "--round-robin cannot be combined with --retries (GNU parallel neither): a block a job took is not given again")
		case o.Header != "":
			return flagMsg("--round-robin", "--header with --round-robin is not supported")
		}
		p.input.pipeMode = &pipeModePlan{roundRobin: true}
	}
	if file != "" {
		p.input.pipeMode = &pipeModePlan{file: file}
	}
	gc := &p.cfg.GNU
	gc.Batch, gc.NoFields, gc.Pipe = gnuinput.BatchOptions{MaxArgs: 1}, false, true
	gc.Template.Context = false
	p.input.pipe, p.input.total, p.input.header, p.input.lines = &o, -1, false, false
	return nil
}

// planNoPipe refuses the flags of --pipe without --pipe or --pipepart.
func planNoPipe(f *runFlags) error {
	g, pf := &f.gnu, &f.pipe
	switch {
	case pf.roundRobin:
		// Its man page says --round-robin implies --pipe; GNU parallel
		// 20221122 runs without --pipe as if it were not given.
		return flagMsg("--round-robin", "--round-robin needs --pipe or --pipepart (GNU parallel 20221122 ignores it without them)")
	case g.block != "" || g.recEndSet || g.recStartSet:
		return flagMsg("--block", "--block, --recend and --recstart need --pipe")
	case pf.regexp || pf.removeRecSep:
		return flagMsg("--regexp", "--regexp and --rrs need --pipe")
	}
	return nil
}

// planPipeChecks refuses what does not apply to --pipe's blocks.
func planPipeChecks(p *runPlan, f *runFlags) error {
	g := &f.gnu
	if f.pipe.pipePart {
		if err := planPipePart(p, f); err != nil {
			return err
		}
	} else if p.input.kind != inputStdin {
		return flagMsg("--pipe", "--pipe cuts stdin into blocks; :::, :::: and -a do not apply")
	}
	switch {
	case p.worker.command != "":
		return flagMsg("--worker", "--worker does not take --pipe's blocks")
	case g.maxArgs >= 0 || g.xContext || g.multi || g.xargs || g.maxChars > 0:
		return flagMsg("--pipe", "with --pipe, -N gives the records per job and -L the lines per record; -n, -X, -m, --xargs and -s do not apply")
	case g.maxReplaceArgs == 0:
		return flagMsg("--pipe", "-N0 gives a job no records; with --pipe, -N must be at least 1")
	case g.maxLines == 0:
		return flagMsg("--pipe", "-L0 gives a record no lines; with --pipe, -L must be at least 1")
	case p.input.colsepSet || p.input.delim != "\n" || p.input.eof != "" || f.null:
		return flagMsg("--pipe", "--colsep, -d, -0 and -E do not apply to --pipe's blocks (records end with --recend)")
	case g.noRunIfEmpty:
		// GNU parallel's -r takes the blank lines out of --pipe's stream;
		// ration's blocks would keep them, silently.
		return flagMsg("--pipe", "-r with --pipe is not supported (GNU parallel removes blank lines from the stream): remove them first, grep -v '^[[:space:]]*$'")
	}
	return nil
}

// pipeBlockOptions are the options of --pipe's blocks (--block's size
// only without --pipepart, whose --block means more).
func pipeBlockOptions(f *runFlags) (gnuinput.BlockOptions, error) {
	g, pf := &f.gnu, &f.pipe
	o := gnuinput.BlockOptions{RecEnd: g.recEnd, RecStart: g.recStart, Regexp: pf.regexp, RemoveRecSep: pf.removeRecSep}
	if !g.recEndSet && !g.recStartSet {
		o.RecEnd = "\n"
	}
	if !pf.regexp {
		o.RecEnd, o.RecStart = recSepUnescape(o.RecEnd), recSepUnescape(o.RecStart)
	}
	if g.block != "" && !pf.pipePart {
		n, err := gnuinput.ParseBlockSize(g.block)
		if err != nil {
			return o, flagErr("--block", err)
		}
		o.Size = n
	}
	o.Records, o.Lines = max(g.maxReplaceArgs, 0), max(g.maxLines, 0)
	if g.header != "" {
		o.Header = pipeHeader(g.header)
		if _, err := regexp.Compile(o.Header); err != nil {
			return o, flagErr("--header", err)
		}
	}
	if err := o.Check(); err != nil {
		return o, flagMsg("--regexp", err.Error())
	}
	return o, nil
}

// recSepUnescape decodes a --recend or --recstart without --regexp as GNU
// parallel does (perl's "qq" of \0, \r, \n, \t, \', \" and \\, from left
// to right), so that the man page's --recend '\n' and a CRLF file's
// --recend '\r\n' cut records; other backslashes stay as they are.
func recSepUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if c, ok := recSepEscape(s[i+1]); ok {
				b.WriteByte(c)
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// recSepEscape is the byte that a backslash and c stand for in --recend and
// --recstart without --regexp, and whether GNU parallel decodes it.
func recSepEscape(c byte) (byte, bool) {
	switch c {
	case '0':
		return 0, true
	case 'r':
		return '\r', true
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	case '\'', '"', '\\':
		return c, true
	}
	return 0, false
}

// pipeFileMode is "cat" for --cat, "fifo" for --fifo, else "".
func pipeFileMode(f *runFlags) (string, error) {
	pf := &f.pipe
	switch {
	case pf.cat && pf.fifo:
		return "", flagMsg("--cat", "--cat and --fifo cannot be combined (GNU parallel neither)")
	case (pf.cat || pf.fifo) && pf.roundRobin && !pf.pipePart:
		return "", flagMsg("--cat", "--cat and --fifo with --round-robin are not supported")
	case pf.fifo && runtime.GOOS == "windows":
		return "", flagMsg("--fifo", "--fifo needs named pipes, which Windows has not; use --cat")
	case (pf.cat || pf.fifo) && f.retries > 1:
		return "", flagMsg("--cat", "--cat and --fifo cannot be combined with --retries: the block is given once")
	case pf.cat:
		return "cat", nil
	case pf.fifo:
		return "fifo", nil
	}
	return "", nil
}

// planPipePart checks the flags of --pipepart: one file (-a FILE or ::::
// FILE) and no -N or -L.
func planPipePart(p *runPlan, f *runFlags) error {
	in, g := &p.input, &f.gnu
	switch {
	case len(in.sources) != 1 || in.sources[0].path == "" || in.sources[0].path == "-":
		return flagMsg("--pipepart", "--pipepart cuts one file, given with -a FILE or :::: FILE (not stdin, not :::)")
	case g.maxReplaceArgs >= 0 || g.maxLines >= 0:
		return flagMsg("--pipepart", "--pipepart cannot be combined with -N or -L (GNU parallel neither): --recend and --recstart say where records end")
	case f.pipe.removeRecSep:
		return flagMsg("--pipepart", "--rrs does not apply to --pipepart (GNU parallel 20221122 ignores it there)")
	}
	return nil
}

// pipePartOptions finishes the plan of --pipepart from the options of
// --pipe's blocks, o, and --cat or --fifo (file): --block's size, or -N, N parts per job slot (the
// default is -10, as GNU parallel's).
func pipePartOptions(p *runPlan, f *runFlags, o gnuinput.BlockOptions, file string) error {
	m := &pipeModePlan{path: p.input.sources[0].path, perSlot: 10, file: file,
		part: gnuinput.PartOptions{RecEnd: o.RecEnd, RecStart: o.RecStart, Regexp: o.Regexp, Header: o.Header}}
	if b := f.gnu.block; f.pipe.roundRobin {
		// GNU parallel: --round-robin with --pipepart is --block -1.
		m.perSlot = 1
	} else if b != "" {
		n, err := gnuinput.ParseBlockSize(strings.TrimPrefix(b, "-"))
		if err != nil {
			return flagErr("--block", err)
		}
		if strings.HasPrefix(b, "-") {
			m.perSlot = int64(n)
		} else {
			m.part.Size, m.perSlot = int64(n), 0
		}
	}
	if m.perSlot > 0 && p.cfg.Shard.Count > 1 {
		// A part is a shard's input by its byte range, the same in every
		// run only when the part size is (planShard comes first).
		return flagMsg("--pipepart", "--pipepart with --shard or RATION_SHARD_COUNT needs --block SIZE: "+
			"parts sized by the job slots follow each run's -j, so the shards would overlap and miss parts")
	}
	gc := &p.cfg.GNU
	gc.Batch, gc.NoFields, gc.Pipe = gnuinput.BatchOptions{MaxArgs: 1}, false, true
	gc.Template.Context = false
	p.input.pipeMode, p.input.total, p.input.header, p.input.lines = m, -1, false, false
	return nil
}
