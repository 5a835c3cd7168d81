package cgroup_test

import (
	"fmt"

	"github.com/ration-run/ration/cgroup"
)

func ExampleParseCPUList() {
	cpus, err := cgroup.ParseCPUList("0-3,8,10-11\n")
	fmt.Println(cpus, len(cpus), err)
	_, err = cgroup.ParseCPUList("3-1")
	fmt.Println(err)
	// Output:
	// [0 1 2 3 8 10 11] 7 <nil>
	// cpu list "3-1": reversed range "3-1": malformed
}

func ExampleReader_Read() {
	// A Kubernetes-style v2 tree: the pod allows 1 CPU, its container 4.
	// The Go runtime reads only the container's cgroup; Read walks up.
	s, err := cgroup.Reader{Root: "testdata/v2-nested"}.Read()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("v%d %s: quota %.2f CPUs from %s (leaf %.2f), memory limit %d at %s, %d host CPUs\n",
		s.Version, s.CPUCgroup, s.CPUQuota, s.CPUQuotaCgroup, s.LeafCPUQuota, s.MemoryLimit, s.MemoryLimitCgroup, s.HostCPUs)
	// Output:
	// v2 /kubepods/pod1/ctr: quota 1.00 CPUs from /kubepods/pod1 (leaf 4.00), memory limit 1073741824 at /kubepods/pod1, 16 host CPUs
}
