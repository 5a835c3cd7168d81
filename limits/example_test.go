package limits_test

import (
	"fmt"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/limits"
)

func ExampleDecideFrom() {
	// A container with 1.5 CPUs of quota on an 8-CPU host, 256 MiB of
	// memory, and jobs that need about 100 MiB each.
	snap := cgroup.Snapshot{
		Version: 2, CPUVersion: 2, MemoryVersion: 2,
		CPUQuota: 1.5, CPUQuotaUs: 150000, CPUPeriodUs: 100000, CPUQuotaCgroup: "/app",
		AffinityCPUs: 8, HostCPUs: 8,
		MemoryLimit: 256 << 20, MemoryLimitCgroup: "/app",
	}
	d, err := limits.DecideFrom(snap, "", 100<<20)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Jobs, d.DecidedBy)
	fmt.Println(d.Reason)
	// Output:
	// 2 memory
	// jobs=2: cgroup v2 CPU quota 1.50 CPUs (150000/100000 us) at /app < 8 host CPUs; 2 x 1.50 = 3.00; memory: 0.9 x cgroup v2 memory limit 256 MiB at /app / 100 MiB per job = 2.30, caps jobs at 2
}

func ExampleDecide() {
	// Read a snapshot tree instead of the live system, as
	// `ration limits --fs-root DIR` does.
	d, err := limits.Decide(limits.Options{FSRoot: "../cgroup/testdata/v2-nested", Jobs: "", Getenv: func(string) string { return "" }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("jobs=%d effective=%.2f leaf quota=%.2f\n", d.Jobs, d.EffectiveCPUs, *d.LeafCPUQuota)
	// Output:
	// jobs=2 effective=1.00 leaf quota=4.00
}

func ExampleParseSize() {
	for _, s := range []string{"100MiB", "512M", "1.5G", "1GB", "4096"} {
		n, _ := limits.ParseSize(s)
		fmt.Println(s, n)
	}
	_, err := limits.ParseSize("12 parsecs")
	fmt.Println(err)
	// Output:
	// 100MiB 104857600
	// 512M 536870912
	// 1.5G 1610612736
	// 1GB 1000000000
	// 4096 4096
	// invalid size "12 parsecs": unknown unit "parsecs" (use K, M, G, T, KiB, MiB, GiB, TiB, KB, MB, GB, TB or B)
}
