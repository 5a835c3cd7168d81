package cgroup

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// hierarchy is a located cgroup hierarchy for one controller.
type hierarchy struct {
	version int
	cgPath  string // the process's path, as in /proc/PID/cgroup
	levels  []level
}

// level is one directory of the walk from the leaf up to the mount root.
type level struct {
	dir    string // on disk, Root prefixed
	cgPath string // as a cgroup path, for messages
}

// locate finds the hierarchy serving controller and the walk from the
// process's cgroup up to the mount root. nil means the controller is not
// available (not mounted, or not enabled in v2).
func (st *state) locate(lines []procCgroup, mounts []mount, controller string) *hierarchy {
	for _, l := range lines {
		if !slices.Contains(l.controllers, controller) {
			continue
		}
		var cands []mount
		for _, m := range mounts {
			if m.fsType == "cgroup" && slices.Contains(m.options, controller) {
				cands = append(cands, m)
			}
		}
		if len(cands) > 0 {
			return st.walk(1, l.path, cands)
		}
	}
	for _, l := range lines {
		if l.id != 0 || len(l.controllers) != 0 {
			continue
		}
		var cands []mount
		for _, m := range mounts {
			if m.fsType == "cgroup2" {
				cands = append(cands, m)
			}
		}
		if len(cands) == 0 {
			return nil
		}
		h := st.walk(2, l.path, cands)
		top := h.levels[len(h.levels)-1].dir
		// In v2 a controller exists below the mount root only when it is
		// listed here; without this check a hybrid host with an empty
		// unified hierarchy would claim v2 CPU control.
		if data, ok := st.readFile(filepath.Join(top, "cgroup.controllers")); ok {
			if !slices.Contains(strings.Fields(data), controller) {
				return nil
			}
		}
		return h
	}
	return nil
}

// walk resolves cgPath against the candidate mounts of one hierarchy: the
// mount whose root is the longest prefix of the path wins, as in the Go
// runtime (internal/runtime/cgroup). A path outside the process's cgroup
// namespace ("/../x") still resolves when some mount's root reaches up that
// far (a host with the hierarchy mounted at several roots); only when none
// does is the first mount's root used, with a warning.
func (st *state) walk(version int, cgPath string, cands []mount) *hierarchy {
	best, rel := -1, ""
	for i, m := range cands {
		r, ok := relTo(m.root, cgPath)
		if ok && (best < 0 || len(m.root) > len(cands[best].root)) {
			best, rel = i, r
		}
	}
	if best < 0 {
		best, rel = 0, ""
		m := cands[0]
		if slices.Contains(strings.Split(cgPath, "/"), "..") {
			st.warn("cgroup path %s is outside this cgroup namespace; using the mount root %s (%s) instead", cgPath, m.root, m.mountPoint)
		} else {
			st.warn("cgroup path %s is not below the root %s of any mount of its hierarchy; using mount point %s instead", cgPath, m.root, m.mountPoint)
		}
	}
	m := cands[best]
	h := &hierarchy{version: version, cgPath: cgPath}
	for {
		h.levels = append(h.levels, level{
			dir:    st.r.file(path.Join(m.mountPoint, rel)),
			cgPath: joinRoot(m.root, rel),
		})
		if rel == "" || rel == "/" {
			break
		}
		rel = path.Dir(rel)
		if rel == "/" || rel == "." {
			rel = ""
		}
	}
	return h
}

// joinRoot is path.Join(root, rel) without cleaning the root's leading
// ".." elements away: "/../.." + "/a" is "/../../a", as /proc/PID/cgroup
// writes it.
func joinRoot(root, rel string) string {
	root = strings.TrimSuffix(root, "/")
	if rel == "" {
		if root == "" {
			return "/"
		}
		return root
	}
	return root + rel
}

// relTo returns cgPath relative to a mount's root ("" for the root
// itself). It fails when the path is not below the root, or when what is
// left still climbs with "..": that part lies outside the mount.
func relTo(root, cgPath string) (string, bool) {
	root = strings.TrimSuffix(root, "/")
	if cgPath == root || (root == "" && cgPath == "/") {
		return "", true
	}
	if !strings.HasPrefix(cgPath, root+"/") {
		return "", false
	}
	rest := cgPath[len(root):]
	if slices.Contains(strings.Split(rest, "/"), "..") {
		return "", false
	}
	return path.Clean(rest), true
}
