// Package limitscmd is `ration limits`: it prints how many jobs ration
// would run here and why (package limits' Decision), the cgroup budget it
// read, and the memory protection a run would have, as text or JSON.
//
// It imports cgroup, limits and cmd/ration/internal/cli; it must not
// import another command's package.
package limitscmd
