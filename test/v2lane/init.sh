#!/bin/busybox sh
# The initramfs's /init: loads the 9p and overlay modules, mounts the
# host's / (shared read-only over virtio-9p) under a tmpfs overlay so the
# guest has the host's userland and writes nothing back, mounts the
# results share, and hands over to the guest script that the kernel
# command line names (v2lane.guest=PATH v2lane.repo=DIR).
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci \
	netfs fscache 9pnet 9pnet_virtio 9p overlay; do
	insmod /modules/$m.ko 2>/dev/null
done
mkdir -p /lower /rw /newroot
# virtio devices appear asynchronously after the module load.
for _ in 1 2 3 4 5 6 7 8 9 10; do
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /lower 2>/dev/null && break
	sleep 0.5
done
fail() {
	echo "v2lane: $*"
	echo o >/proc/sysrq-trigger
	sleep 10
}
grep -q ' /lower ' /proc/mounts || fail "cannot mount the host's / over 9p"
mount -t tmpfs -o size=1g tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot || fail "overlay over the host's / failed"
mkdir -p /newroot/v2lane-out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 laneout /newroot/v2lane-out || echo "v2lane: no results share"
guest=
for a in $(cat /proc/cmdline); do
	case $a in v2lane.guest=*) guest=${a#v2lane.guest=} ;; esac
done
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /bin/bash "$guest"
