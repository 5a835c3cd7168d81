package jobcgroup_test

import (
	"fmt"

	"github.com/ration-run/ration/internal/jobcgroup"
)

// A runner makes the group before it starts any job, starts every job
// through it (ration's runner and worker pool do, with the group in
// runner.ProcessExecutor.Cgroup and worker.Config.Cgroup), and closes it
// once no job is left. Without a limit or a writable cgroup there is no
// group, and the jobs run beside the runner as before. (Not run: it needs
// root and a memory limit.)
func Example() {
	g, err := jobcgroup.Create(jobcgroup.Options{})
	if err != nil {
		fmt.Println("the jobs share this process's cgroup:", err)
		return
	}
	defer g.Close()
	fmt.Println("the jobs run in", g)
}
