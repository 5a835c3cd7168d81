package cgroup

import (
	"os"
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
	// outside is set when no mount's root is a prefix of cgPath, so the
	// cgroup was searched for below a mount made outside the process's
	// cgroup namespace (findOutside), or the mount point stands in.
	outside bool
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
	outside := best < 0
	if outside {
		best, rel = st.findOutside(cgPath, cands)
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
	h := &hierarchy{version: version, cgPath: cgPath, outside: outside}
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

// maxOutsideCandidates bounds the directories findOutside looks at.
const maxOutsideCandidates = 10000

// findOutside locates a cgroup path that no mount's root is a prefix of
// because the reader is in a cgroup namespace rooted below the mount's
// root: a hierarchy mounted outside the namespace (unshare -C, a sandbox
// that keeps the host's /sys) shows its root as "/../..", two levels above
// the namespace's root, while the process's cgroup reads "/" (or "/../x").
// The names of the levels in between are written nowhere, so the
// directories that many levels below the mount point are listed, and the
// one whose cgroup.procs holds the process is taken; a snapshot has no
// process to look for, and there the match must be the only one. It
// returns the candidate's index and the path relative to its root, or -1.
func (st *state) findOutside(cgPath string, cands []mount) (int, string) {
	ups, rest := splitUps(cgPath)
	if slices.Contains(rest, "..") {
		return -1, ""
	}
	for i, m := range cands {
		rootUps, rootRest := splitUps(m.root)
		down := rootUps - ups
		if len(rootRest) > 0 || down <= 0 {
			continue
		}
		dirs := []string{""}
		for range down {
			dirs = st.subdirs(m.mountPoint, dirs)
		}
		var found []string
		for _, d := range dirs {
			rel := path.Join(append([]string{"/", d}, rest...)...)
			if st.holdsProcess(st.r.file(path.Join(m.mountPoint, rel))) {
				found = append(found, rel)
			}
		}
		if len(found) == 1 {
			return i, found[0]
		}
	}
	return -1, ""
}

// splitUps splits a cgroup path such as "/../../a/b" into its leading
// ".." elements (2) and the rest ([a b]).
func splitUps(p string) (ups int, rest []string) {
	for _, e := range strings.Split(p, "/") {
		switch {
		case e == "":
		case e == ".." && len(rest) == 0:
			ups++
		default:
			rest = append(rest, e)
		}
	}
	return ups, rest
}

// subdirs lists the directories one level below each of dirs (relative to
// the mount point mp), at most maxOutsideCandidates in all.
func (st *state) subdirs(mp string, dirs []string) []string {
	var next []string
	for _, d := range dirs {
		ents, err := os.ReadDir(st.r.file(path.Join(mp, d)))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.IsDir() && len(next) < maxOutsideCandidates {
				next = append(next, path.Join(d, e.Name()))
			}
		}
	}
	return next
}

// holdsProcess reports whether the cgroup directory dir exists and, when
// the reading is of a live process, lists it in cgroup.procs.
func (st *state) holdsProcess(dir string) bool {
	if st.pid == 0 {
		fi, err := os.Stat(dir)
		return err == nil && fi.IsDir()
	}
	data, err := readFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return false
	}
	pids, _ := appendProcs(nil, data)
	return slices.Contains(pids, st.pid)
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
