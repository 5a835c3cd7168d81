// Package v2lane holds the scenarios of the cgroup v2 test lane: ration
// started the way a Kubernetes pod's container is started, by a real OCI
// runtime, inside the lane's VM. The tests build only with -tags v2lane
// and run only there (lane.sh, README.md); the package has no API.
//
// It imports nothing of this module: it runs the ration binary, as a pod
// would.
package v2lane
