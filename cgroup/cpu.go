package cgroup

import (
	"fmt"
	"path/filepath"
	"time"
)

func (st *state) readCPU(s *Snapshot, h *hierarchy) {
	for i, lv := range h.levels {
		read := st.quotaV2
		if h.version == 1 {
			read = st.quotaV1
		}
		quota, period, file, ok := read(lv.dir)
		if !ok {
			continue
		}
		cpus := float64(quota) / float64(period)
		if i == 0 {
			s.LeafCPUQuota = cpus
		}
		if s.CPUQuota == 0 || cpus < s.CPUQuota {
			s.CPUQuota, s.CPUQuotaUs, s.CPUPeriodUs = cpus, quota, period
			s.CPUQuotaCgroup, s.CPUQuotaFile = lv.cgPath, file
		}
	}
	st.readCPUStat(s, h)
}

// quotaV1 reads one level's cpu.cfs_quota_us and cpu.cfs_period_us; ok is
// false when the level sets no valid limit.
func (st *state) quotaV1(dir string) (quota, period int64, file string, ok bool) {
	qf, pf := filepath.Join(dir, "cpu.cfs_quota_us"), filepath.Join(dir, "cpu.cfs_period_us")
	qd, ok := st.readFile(qf)
	if !ok {
		return 0, 0, "", false
	}
	q, err := parseInt(qd)
	switch {
	case err != nil:
		st.warn("%s: %v; ignored", qf, err)
		return 0, 0, "", false
	case q < 0:
		return 0, 0, "", false // -1: no limit at this level
	case q == 0:
		st.warn("%s: quota 0 is not a valid limit; ignored", qf)
		return 0, 0, "", false
	}
	pd, ok := st.readFile(pf)
	if !ok {
		st.warn("%s: missing next to %s; quota ignored", pf, qf)
		return 0, 0, "", false
	}
	p, err := parseInt(pd)
	if err != nil || p <= 0 {
		if err == nil {
			err = fmt.Errorf("period %d is not positive", p)
		}
		st.warn("%s: %v; quota ignored", pf, err)
		return 0, 0, "", false
	}
	return q, p, qf, true
}

// quotaV2 reads one level's cpu.max; ok is false when the level sets no
// valid limit.
func (st *state) quotaV2(dir string) (quota, period int64, file string, ok bool) {
	f := filepath.Join(dir, "cpu.max")
	d, ok := st.readFile(f)
	if !ok {
		return 0, 0, "", false
	}
	q, p, err := parseCPUMax(d)
	if err != nil {
		st.warn("%s: %v; ignored", f, err)
		return 0, 0, "", false
	}
	if q < 0 {
		return 0, 0, "", false
	}
	return q, p, f, true
}

// readCPUStat reads the leaf's throttling counters.
func (st *state) readCPUStat(s *Snapshot, h *hierarchy) {
	f := filepath.Join(h.levels[0].dir, "cpu.stat")
	d, ok := st.readFile(f)
	if !ok {
		return
	}
	m, err := parseKeyed(d)
	if err != nil {
		st.warn("%s: %v; throttling counters ignored", f, err)
		return
	}
	s.NrPeriods, s.NrThrottled = m["nr_periods"], m["nr_throttled"]
	if h.version == 1 {
		s.ThrottledTime = time.Duration(m["throttled_time"])
	} else {
		s.ThrottledTime = time.Duration(m["throttled_usec"]) * time.Microsecond
	}
}

func (st *state) readCPUSet(s *Snapshot, h *hierarchy) {
	names := []string{"cpuset.effective_cpus", "cpuset.cpus"}
	if h.version == 2 {
		names = []string{"cpuset.cpus.effective"}
	}
	for _, lv := range h.levels {
		for _, n := range names {
			f := filepath.Join(lv.dir, n)
			d, ok := st.readFile(f)
			if !ok {
				continue
			}
			cpus, err := ParseCPUList(d)
			if err != nil {
				st.warn("%s: %v; ignored", f, err)
				continue
			}
			if len(cpus) == 0 {
				continue // unconfigured (v1) or inheriting: look further up
			}
			s.CPUSet, s.CPUSetFile = cpus, f
			return
		}
	}
}
