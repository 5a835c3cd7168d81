#!/usr/bin/env bash
# The cgroup v2 test lane: boots Debian's 6.1 kernel under QEMU (software
# emulation: no KVM needed), with this machine's / shared read-only as the
# guest's userland, and runs there every test that uses a real cgroup plus
# the Kubernetes-shaped container scenarios. See README.md.
#
#   test/v2lane/lane.sh          everything
#   RUN=TestX test/v2lane/lane.sh   only the tests matching -test.run TestX
#
# Prints one summary line and exits 1 when any test failed (expected
# failures, listed in expect.txt, do not fail the lane).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
here=$repo/test/v2lane
start=$SECONDS
export PATH="/usr/local/go/bin:$PATH"
cache=${V2LANE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ration-v2lane}
work=$repo/bin/v2lane # git-ignored
bin=$work/bin
out=$work/out
RUN=${RUN:-}
# Emulation is 10-20x slower than the host; tests with hard deadlines
# scale them by this factor.
export RATION_TEST_TIMESCALE=${RATION_TEST_TIMESCALE:-10}

log() { echo "v2 lane: $*" >&2; }

# deps installs what the lane needs that this machine lacks.
deps() {
	local need=()
	command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
	[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' || need+=(busybox-static)
	command -v runc >/dev/null || need+=(runc)
	command -v crun >/dev/null || need+=(crun)
	command -v parallel >/dev/null || need+=(parallel)
	command -v cpio >/dev/null || need+=(cpio)
	command -v file >/dev/null || need+=(file)
	[ ${#need[@]} = 0 ] && return
	log "installing ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >/dev/null
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# kernel makes $cache/vmlinuz and $cache/initrd-HASH.gz (HASH: init.sh's)
# unless they are there.
kernel() {
	local hash
	hash=$(cat "$here/init.sh" /bin/busybox | sha256sum | cut -c1-12)
	initrd=$cache/initrd-$hash.gz
	vmlinuz=$cache/vmlinuz
	[ -f "$vmlinuz" ] && [ -f "$initrd" ] && return
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d)
	local pkg
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	[ -n "$pkg" ] || { apt-get update -qq >/dev/null && pkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}'); }
	log "fetching $pkg"
	(cd "$tmp" && apt-get download "$pkg" 2>/dev/null && dpkg-deb -x ./*.deb x)
	local kv
	kv=$(ls "$tmp/x/lib/modules")
	cp "$tmp/x/boot/vmlinuz-$kv" "$vmlinuz"
	mkdir -p "$tmp/ird/bin" "$tmp/ird/modules" "$tmp/ird/proc" "$tmp/ird/sys" "$tmp/ird/dev"
	cp /bin/busybox "$tmp/ird/bin/"
	cp "$here/init.sh" "$tmp/ird/init"
	chmod +x "$tmp/ird/init"
	local m
	for m in drivers/virtio/virtio drivers/virtio/virtio_ring drivers/virtio/virtio_pci_modern_dev \
		drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci fs/netfs/netfs fs/fscache/fscache \
		net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p fs/overlayfs/overlay; do
		cp "$tmp/x/lib/modules/$kv/kernel/$m.ko" "$tmp/ird/modules/"
	done
	(cd "$tmp/ird" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$tmp"
}

# build compiles the commands the tests run and one test binary per
# package that has real-cgroup tests, and writes tests.list: NAME, the
# package's directory, its -test.run pattern and the binary. The guest
# runs this machine's own userland, so the binaries need not be static,
# and they share the build cache with `go test` here.
build() {
	rm -rf "$bin" && mkdir -p "$bin/tests" "$bin/bench"
	go build -o "$bin/ration" ./cmd/ration
	go build -o "$bin/goworker" ./runner/worker/examples/goworker
	(cd bench && go build -o "$bin/bench/scenario" ./scenario &&
		go build -o "$bin/bench/burn" ./workers/burn &&
		go build -o "$bin/bench/poolmap" ./scenario/poolmap)
	ln -s ../ration "$bin/bench/ration"
	: >"$out/tests.list"
	local mod pkg pattern name
	while IFS=$'\t' read -r mod pkg pattern; do
		name=$(echo "$mod/$pkg" | sed 's|^\./||; s|/\.$||; s|/|-|g')
		(cd "$mod" && go test -c -o "$bin/tests/$name.test" "./$pkg")
		printf '%s\t%s\t%s\t%s\n' "$name" "$repo/$mod/$pkg" "$pattern" "$bin/tests/$name.test" >>"$out/tests.list"
	done < <(go run ./test/v2lane/cgtests)
	go test -c -tags v2lane -o "$bin/tests/v2lane.test" ./test/v2lane
	printf '%s\t%s\t%s\t%s\n' v2lane "$here" . "$bin/tests/v2lane.test" >>"$out/tests.list"
}

# boot NAME LIST SMP SKIP REPS boots the guest with SMP CPUs to run the
# tests in $out/LIST, each binary with -test.skip SKIP, and writes its
# console to $out/console-NAME.txt.
boot() {
	local name=$1 list=$2 smp=$3 skip=$4 reps=$5 run=$RUN
	[ "$name" = main ] || run=
	cat >"$out/lane.env" <<-ENV
		BOOT=$name
		LIST=$list
		SKIP='$skip'
		REPO=$repo
		BIN=$bin
		RUN='$run'
		TIMEOUT=${V2LANE_TEST_TIMEOUT:-8m}
		RATION_TEST_TIMESCALE=$RATION_TEST_TIMESCALE
		V2LANE_STRESS_REPS=$reps
		V2LANE_STRESS_RATION=${V2LANE_STRESS_RATION:-}
		COUNT=${V2LANE_COUNT:-1}
	ENV
	timeout "${V2LANE_VM_TIMEOUT:-25m}" qemu-system-x86_64 -machine accel=tcg -smp "$smp" -m "${V2LANE_MEM:-3072}" -nic none \
		-kernel "$vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet v2lane.guest=$here/guest.sh" \
		-nographic -no-reboot \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$out",mount_tag=laneout,security_model=none \
		</dev/null >"$out/console-$name.txt" 2>&1 || log "qemu exited $?"
}

# The stress boot: TestPodOOMStress measures whether the memory guard's
# readings beat a job touching memory at full speed, so it needs a guest
# whose time is its own. Two emulated CPUs on this 2-CPU machine are not
# that: QEMU's own threads preempt one vCPU thread for 10 to 40 ms while
# the other runs a job at full speed, a stall no pod's CPUs have (CPU
# throttling stops a container's threads together). With one vCPU, a stall
# stops the job as well as the guard (bench/results/v2lane/stress.txt).
stress=TestPodOOMStress

# stressSelected reports whether RUN (empty: everything) selects the
# stress test: the scenarios' binary lists it (it has no TestMain, so
# listing runs nothing).
stressSelected() {
	(cd "$here" && "$bin/tests/v2lane.test" -test.list "${RUN:-.}") | grep -qx "$stress"
}

# testlines TEST FILE prints, at most 150 lines, what `go test -v` wrote in
# FILE while TEST or one of its subtests was the current test: the lines
# after a "=== RUN", "=== NAME" or "=== CONT" header naming it, and its
# "--- FAIL" block. The interleaved output of parallel tests is filtered
# out by the same headers.
testlines() {
	awk -v t="$1" '
		/^=== (RUN|NAME|CONT|PAUSE)/ { cur = $3; next }
		/^(--- |    --- )(FAIL|PASS|SKIP):/ { cur = $3 }
		/^(PASS|FAIL)$/ { cur = "" }
		cur == t || index(cur, t "/") == 1 { print "    " $0 }
	' "$2" | tail -n 150
}

# summary counts top-level tests: a binary that failed without a failing
# test (a panic, a timeout) counts as one failure of its own.
summary() {
	local pass=0 fail=0 xfail=0 xpass=0 failed=() xfailed=() xpassed=()
	local name rc t
	local boot
	for boot in main stress; do
		[ -f "$out/$boot.list" ] || continue
		[ -f "$out/finished-$boot" ] || { failed+=("the $boot boot's VM did not finish (see $out/console-$boot.txt)"); fail=$((fail + 1)); }
	done
	while IFS=$'\t' read -r name _ _ _; do
		local f=$out/test-$name.txt
		[ -f "$f" ] || continue
		pass=$((pass + $(grep -c '^--- PASS' "$f" || true)))
		local nfail=0
		while read -r t; do
			if grep -qx "$t" <(grep -v '^#' "$here/expect.txt" | awk '{print $1}'); then
				xfail=$((xfail + 1)) xfailed+=("$t")
			else
				fail=$((fail + 1)) failed+=("$t") nfail=$((nfail + 1))
			fi
		done < <(grep '^--- FAIL' "$f" | awk '{print $3}')
		rc=$(cat "$out/rc-$name" 2>/dev/null || echo none)
		if [ "$rc" != 0 ] && [ "$nfail" = 0 ] && ! grep -q '^--- FAIL' "$f"; then
			fail=$((fail + 1)) failed+=("$name (exit $rc, no failing test: $(grep -m1 -E '^panic|timed out' "$f" || echo see output))")
		fi
		while read -r t; do
			grep -q "^--- PASS: $t " "$f" && xpass=$((xpass + 1)) xpassed+=("$t")
		done < <(grep -v '^#' "$here/expect.txt" | awk '{print $1}')
	done < <(cat "$out"/main.list "$out"/stress.list 2>/dev/null)
	local ctl kv
	kv=$(sed -n 1p "$out/guest.txt" 2>/dev/null)
	ctl=$(sed -n 3p "$out/guest.txt" 2>/dev/null)
	[ ${#failed[@]} = 0 ] || printf 'v2 lane: FAIL %s\n' "${failed[@]}"
	# CI keeps only this script's output, so each failing test's own lines
	# are printed here too.
	for t in $(printf '%s\n' "${failed[@]}" | grep -v ' ' | sort -u); do
		while IFS=$'\t' read -r name _ _ _; do
			testlines "$t" "$out/test-$name.txt"
		done < <(cat "$out"/main.list "$out"/stress.list 2>/dev/null)
	done
	[ ${#xfailed[@]} = 0 ] || printf 'v2 lane: expected failure %s (see test/v2lane/expect.txt)\n' "${xfailed[@]}"
	[ ${#xpassed[@]} = 0 ] || printf 'v2 lane: %s passed this run, though expected to fail: once it keeps passing, delete its line in test/v2lane/expect.txt\n' "${xpassed[@]}"
	local extra=
	# Each expected failure is labelled by its reason in expect.txt, up to
	# the first colon.
	[ "$xfail" = 0 ] || extra="$extra, $xfail expected failure$([ "$xfail" = 1 ] || echo s) ($(for t in "${xfailed[@]}"; do
		awk -v t="$t" '$1 == t { $1 = ""; sub(/^ +/, ""); sub(/:.*/, ""); print }' "$here/expect.txt"
	done | sort | uniq -c | awk '{ n = $1; $1 = ""; sub(/^ /, ""); printf "%s%s%s", sep, (n > 1 ? n " " : ""), $0; sep = "; " }'))"
	[ "$xpass" = 0 ] || extra="$extra, $xpass expected failure passed"
	echo "v2 lane: $pass passed, $fail failed$extra, kernel ${kv:-?}, cgroup2 controllers ${ctl:-?}, $(awk "BEGIN {printf \"%.1f\", $((SECONDS - start)) / 60}") min"
	[ "$fail" = 0 ]
}

deps
mkdir -p "$out"
rm -f "$out"/test-*.txt "$out"/rc-* "$out"/finished* "$out"/progress.txt "$out"/guest.txt "$out"/console*.txt "$out"/*.list "$out"/stress-rep*.stderr
kernel
build
log "built in $((SECONDS - start)) s; booting (output in $out)"
cp "$out/tests.list" "$out/main.list"
boot main main.list 2 "^$stress\$" 1
if stressSelected; then
	printf '%s\t%s\t%s\t%s\n' v2lane-stress "$here" "^$stress\$" "$bin/tests/v2lane.test" >"$out/stress.list"
	log "booting again for $stress, ${V2LANE_STRESS_SMP:-1} vCPU"
	boot stress stress.list "${V2LANE_STRESS_SMP:-1}" '' "${V2LANE_STRESS_REPS:-5}"
fi
summary
