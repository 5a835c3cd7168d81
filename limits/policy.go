package limits

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/memory"
)

// DefaultMaxJobs caps the default number of jobs (not -j N or N%).
const DefaultMaxJobs = 8

// input is one CPU count that takes part in the minimum.
type input struct {
	key   string // Decision.DecidedBy when it decides
	value float64
	desc  string // for the reason
}

// cpuBudget is the effective CPU count: the smallest of its inputs.
type cpuBudget struct {
	inputs []input // in the order that names the decider on a tie
	dec    int     // index of the smallest input
	chain  string  // the inputs for the reason: "A < B = C, no CPU quota ..."
}

func (b cpuBudget) value() float64 { return b.inputs[b.dec].value }
func (b cpuBudget) by() string     { return b.inputs[b.dec].key }

// effectiveCPUs is min(quota, cpuset, affinity, host) of a reading. An
// input equal to the host count is named with the host instead of on its
// own, so the sentence names every input without a chain of "=".
func effectiveCPUs(s cgroup.Snapshot) cpuBudget {
	host := max(s.HostCPUs, 1)
	cpuset := formatCPUList(s.CPUSet)
	var ins []input
	if s.CPUQuota > 0 {
		ins = append(ins, input{"cpu_quota", s.CPUQuota, fmt.Sprintf("cgroup v%d CPU quota %s CPUs (%d/%d us) at %s",
			s.CPUVersion, FormatCPUs(s.CPUQuota), s.CPUQuotaUs, s.CPUPeriodUs, s.CPUQuotaCgroup)})
	}
	if n := s.CPUSetCount(); n > 0 && n != host {
		ins = append(ins, input{"cpuset", float64(n), fmt.Sprintf("cpuset %s (%d CPUs)", cpuset, n)})
	}
	if s.AffinityCPUs > 0 && s.AffinityCPUs != host {
		ins = append(ins, input{"affinity", float64(s.AffinityCPUs), fmt.Sprintf("%d affinity CPUs", s.AffinityCPUs)})
	}
	var same []string
	if s.AffinityCPUs == host && s.AffinitySource != s.HostCPUsSource {
		same = append(same, fmt.Sprintf("affinity %d", host))
	}
	if s.CPUSetCount() == host {
		same = append(same, "cpuset "+cpuset)
	}
	hostDesc := fmt.Sprintf("%d host CPUs", host)
	if len(same) > 0 {
		hostDesc += " (" + strings.Join(same, ", ") + ")"
	}
	ins = append(ins, input{"host", float64(host), hostDesc})
	b := cpuBudget{inputs: ins}
	for i, in := range ins {
		if in.value < ins[b.dec].value {
			b.dec = i
		}
	}
	b.chain = describeChain(ins, b.dec) + missingQuota(s)
	return b
}

// missingQuota says, for the reason, why no quota took part.
func missingQuota(s cgroup.Snapshot) string {
	switch {
	case s.CPUQuota > 0:
		return ""
	case s.CPUVersion != 0:
		return fmt.Sprintf(", no CPU quota in cgroup v%d %s", s.CPUVersion, s.CPUCgroup)
	case s.NoCgroups != "":
		return ", " + s.NoCgroups
	}
	return ", no CPU cgroup"
}

// describeChain renders the CPU inputs in ascending order starting with
// the decider: "A < B = C".
func describeChain(ins []input, dec int) string {
	rest := make([]input, 0, len(ins)-1)
	for i, in := range ins {
		if i != dec {
			rest = append(rest, in)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return rest[i].value < rest[j].value })
	var b strings.Builder
	b.WriteString(ins[dec].desc)
	prev := ins[dec].value
	for _, in := range rest {
		if in.value == prev {
			b.WriteString(" = ")
		} else {
			b.WriteString(" < ")
		}
		b.WriteString(in.desc)
		prev = in.value
	}
	return b.String()
}

// choice is a job count, the input that decided it (Decision.DecidedBy)
// and the arithmetic behind it, for the reason.
type choice struct {
	n   int
	by  string
	why string
	// given is set for an explicit request: the request as the reason
	// names it, and the default it overrode.
	given string
	def   *choice
}

// cpuPolicy is the default: max(1, min(floor(2 x effective CPUs), 8)).
func cpuPolicy(b cpuBudget) choice {
	eff := b.value()
	twice := 2 * eff
	c := choice{n: floorish(twice), by: b.by(), why: fmt.Sprintf("2 x %s = %s", FormatCPUs(eff), FormatCPUs(twice))}
	switch {
	case c.n > DefaultMaxJobs:
		c.n, c.by = DefaultMaxJobs, "max"
		c.why += fmt.Sprintf(", capped at %d", DefaultMaxJobs)
	case c.n < 1:
		c.n, c.by = 1, "min"
		c.why += ", raised to 1"
	}
	return c
}

// percentPolicy is N% of the effective CPUs, at least 1 and not capped.
func percentPolicy(b cpuBudget, req request) choice {
	eff := b.value()
	share := req.percent / 100 * eff
	c := choice{n: floorish(share), by: b.by(), why: fmt.Sprintf("%s x %s effective CPUs = %s", req.flag(), FormatCPUs(eff), FormatCPUs(share))}
	if c.n < 1 {
		c.n, c.by = 1, "min"
		c.why += ", raised to 1"
	}
	return c
}

// relativePolicy is GNU parallel's -j +N or -j -N: the effective CPUs,
// rounded down (GNU parallel counts whole CPU threads), plus or minus N,
// at least 1 and not capped at 8. Fewer than one job is raised to 1 here;
// Options.RefuseNoSlot makes Decide refuse it instead.
func relativePolicy(b cpuBudget, req request) choice {
	n, sum := relativeSum(b.value(), req)
	c := choice{n: n, by: b.by(), why: req.flag() + ": " + sum}
	if c.n < 1 {
		c.n, c.by = 1, "min"
		c.why += ", raised to 1"
	}
	return c
}

// relativeSum is the job count of -j +N or -j -N on eff effective CPUs,
// and its arithmetic for the reason: "4 effective CPUs + 2 = 6", or
// "floor(1.50 effective CPUs) + 2 = 3".
func relativeSum(eff float64, req request) (int, string) {
	cpus := floorish(eff)
	n := cpus + req.offset
	if req.offset > 0 && n < cpus { // "+9223372036854775807"
		n = math.MaxInt
	}
	desc := fmt.Sprintf("%d effective CPUs", cpus)
	if math.Abs(eff-float64(cpus)) > 1e-9 {
		desc = fmt.Sprintf("floor(%s effective CPUs)", FormatCPUs(eff))
	}
	op, k := "+", req.offset
	if strings.HasPrefix(req.text, "-") {
		op, k = "-", -k
	}
	return n, fmt.Sprintf("%s %s %d = %d", desc, op, k, n)
}

// explicit is -j N (or RATION_JOBS=N): exactly N, whatever the default
// would be.
func explicit(req request, def choice) choice {
	return choice{n: req.n, by: "explicit", given: req.flag(), def: &def}
}

// floorish rounds down, forgiving the float error of 0.9 x 3 and the like.
func floorish(v float64) int { return int(math.Floor(v + 1e-9)) }

// memCap is how many jobs of a given size fit in memory.
type memCap struct {
	fit      int    // > 0: at most this many jobs; 0: no cap
	why      string // the arithmetic, for the reason
	warnings []string
}

// memoryCap is how many jobs of memPerJob fit (memory.JobsFit: floor(0.9 x
// memory / memPerJob)), at least 1, where memory is the cgroup's limit or,
// without one, the host's MemTotal.
func memoryCap(s cgroup.Snapshot, memPerJob int64) memCap {
	if memPerJob <= 0 {
		return memCap{}
	}
	limit, what := s.MemoryLimit, ""
	switch {
	case s.MemoryLimit > 0:
		what = fmt.Sprintf("cgroup v%d memory limit %s at %s", s.MemoryVersion, FormatSize(limit), s.MemoryLimitCgroup)
	case s.HostMemory > 0:
		limit = s.HostMemory
		what = fmt.Sprintf("host memory %s (no cgroup memory limit)", FormatSize(limit))
	default:
		return memCap{warnings: []string{"memory per job given but neither a cgroup memory limit nor the host memory is known; no memory cap applied"}}
	}
	fit, share := memory.JobsFit(limit, memPerJob)
	m := memCap{fit: fit, why: fmt.Sprintf("%g x %s / %s per job = %s", memory.Headroom, what, FormatSize(memPerJob), FormatCPUs(share))}
	if m.fit < 1 {
		m.warnings = append(m.warnings, fmt.Sprintf("even one job of %s does not fit in %g x %s; running 1 job anyway", FormatSize(memPerJob), memory.Headroom, what))
		m.fit = 1
	}
	return m
}

// apply caps a CPU-based choice (the default or N%) by memory.
func (m memCap) apply(c choice) choice {
	switch {
	case m.fit <= 0:
	case m.fit < c.n:
		c.n, c.by = m.fit, "memory"
		c.why += "; memory: " + m.why + ", caps jobs at " + strconv.Itoa(m.fit)
	default:
		c.why += "; memory: " + m.why + ", no cap"
	}
	return c
}

// exceeded warns when an explicit request asks for more jobs than fit in
// memory, which it may: the user may know their jobs' size better.
func (m memCap) exceeded(req request) string {
	if m.fit > 0 && req.n > m.fit {
		return fmt.Sprintf("%s exceeds what memory fits: %s, so only %d jobs", req.flag(), m.why, m.fit)
	}
	return ""
}

// reason is Decision.Reason: one sentence naming every input and the
// decider.
func reason(c choice, b cpuBudget) string {
	if c.def != nil {
		return fmt.Sprintf("jobs=%d: %s given (the default would be %d: %s; %s)", c.n, c.given, c.def.n, b.chain, c.def.why)
	}
	return fmt.Sprintf("jobs=%d: %s; %s", c.n, b.chain, c.why)
}

// FormatCPUs prints a CPU amount, or a job count before the policy rounds
// it, with two decimals as the reasons do. It rounds down, as the policy
// does (with floorish's tolerance), so that the printed arithmetic leads
// to the job count: a quota of 1.99999 CPUs gives 3 jobs and reads
// "2 x 1.99 = 3.99", not "2 x 2.00 = 4.00".
func FormatCPUs(v float64) string {
	return strconv.FormatFloat(math.Floor(v*100+1e-7)/100, 'f', 2, 64)
}

// formatCPUList renders sorted CPU numbers in the kernel's list syntax,
// the inverse of cgroup.ParseCPUList: [0 1 2 3 8] -> "0-3,8".
func formatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
