#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the test VM (tools/vm/run): loads vnet.ko, runs every selftest
# binary, then checks the module's lifecycle: rmmod refused while a file is
# open, clean after, no leak, and a kernel log free of warnings.
#
# Prints TAP; the exit status is non-zero if anything failed.
#
#   VNET_KO    module to load (default: the tree's vnet.ko)
#   VNET_ARGS  module parameters
#   VNET_SKIP  test programs not to run (VNET_SKIP_WHY says why)
#   VNET_TORTURE_SECONDS  how long the ABI torture runs (30 s here)
#   VNET_TORTURE_SEED     replays a torture run by its printed seed
#   VNET_HANG_S  a test still running this long (600 s) is reported: what
#                its processes and every blocked task are waiting in

here=$(cd "$(dirname "$0")" && pwd)
ko=${VNET_KO:-$here/../vnet.ko}
failed=0
n=0

check() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n lifecycle.$2"
	else
		echo "not ok $n lifecycle.$2"
		failed=1
	fi
}

meminfo_kb() {
	awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo
}

# vmalloc'd memory but kernel stacks: kernel worker threads started during
# the tests live on for minutes (and with KASAN their stacks are 32 kB).
vmalloc_kb() {
	echo $(($(meminfo_kb VmallocUsed) - $(meminfo_kb KernelStack)))
}

dmesg -C
# The wire tests load these; their module memory is vmalloc'd too.
modprobe veth
modprobe sch_netem
# vnet.ko's checksum is the kernel's crc32c(); insmod does not load what a
# module needs.
modprobe libcrc32c
vmalloc_before=$(vmalloc_kb)

# /dev/vnet's owner and mode as on a node with the udev rule installed
# (make udev-install): systemd-udevd applies tools/udev/60-vnet.rules, from
# /run/udev/rules.d, with a group vnet in a copy of /etc/group bound over
# it (the host's root is read-only here).  udevd runs only while the module
# loads: left running, it would apply its link policies (MAC addresses)
# to the tests' veth pairs.
udevd=/lib/systemd/systemd-udevd
if [ -x "$udevd" ]; then
	if ! getent group vnet >/dev/null; then
		cp /etc/group /run/vnet-group &&
			echo "vnet:x:979:" >>/run/vnet-group &&
			mount --bind /run/vnet-group /etc/group
	fi
	mkdir -p /run/udev/rules.d &&
		cp "$here/../tools/udev/60-vnet.rules" /run/udev/rules.d/ &&
		"$udevd" --daemon
fi

# Quick retries, so "unreachable" comes in well under a second.
# shellcheck disable=SC2086
insmod "$ko" ${VNET_ARGS:-max_retries=50 retrans_ms=20}
check $? insmod
[ -c /dev/vnet ] || { echo "Bail out! no /dev/vnet"; exit 1; }
if [ -x "$udevd" ]; then
	# /init chrooted into the host's root: udevadm would take itself for
	# a program in a chroot and ignore both requests.
	SYSTEMD_IGNORE_CHROOT=1 udevadm settle -t 30
	SYSTEMD_IGNORE_CHROOT=1 udevadm control --exit
	[ "$(stat -c '%G %a' /dev/vnet)" = "vnet 660" ]
	check $? udev_rule_gives_dev_vnet_to_group_vnet
else
	echo "ok $((n += 1)) # SKIP udev_rule_gives_dev_vnet_to_group_vnet: no $udevd"
	chgrp 979 /dev/vnet && chmod 0660 /dev/vnet
fi
# vnet's own vmalloc areas, named by their callers: the loopback card's.
vnet_areas=$(grep -c '\[vnet\]' /proc/vmallocinfo)

# Each program, and how long it took: the debug kernel's lane is slow.
# Programs named in VNET_SKIP are skipped, saying VNET_SKIP_WHY.
run_timed() {
	case " ${VNET_SKIP-} " in
	*" $1 "*)
		echo "ok $((n += 1)) # SKIP $1: ${VNET_SKIP_WHY:-VNET_SKIP}"
		return
		;;
	esac
	t0=$(date +%s)
	"$here/$1" &
	pid=$!
	hang_watch "$pid" "$1" &
	watch=$!
	wait "$pid" || failed=1
	kill "$watch" 2>/dev/null
	wait "$watch" 2>/dev/null
	echo "# $1: $(($(date +%s) - t0)) s"
}

# A test that hangs in the kernel outlives its own timeout, and the VM's
# timeout then kills everything that would say where: say it first.  The
# waits vnet may make in close, exit or detach are killable or bounded,
# so one of them here is a bug; blocked tasks come with their stacks
# (sysrq w), and so does every process of the test.
hang_kids() {
	for c in $(pgrep -P "$1"); do
		echo "$c"
		hang_kids "$c"
	done
}

hang_watch() {
	waited=0
	while [ "$waited" -lt "${VNET_HANG_S:-600}" ]; do
		sleep 5
		waited=$((waited + 5))
		kill -0 "$1" 2>/dev/null || return 0
	done
	echo "# $2: still running after $waited s; its processes and" \
	     "blocked tasks:"
	ps -eo pid,ppid,stat,wchan:32,comm | awk '$1 != 2 && $2 != 2' |
		sed 's/^/# /'
	for p in "$1" $(hang_kids "$1"); do
		echo "# stack of $p ($(cat "/proc/$p/comm" 2>/dev/null)):"
		sed 's/^/#   /' "/proc/$p/stack" 2>/dev/null
	done
	echo w > /proc/sysrq-trigger
	dmesg | tail -n 200 | sed 's/^/# /'
}

for t in ioctl_test paging_test lifetime_test wire_test user_test priv_test \
	 frag_test pin_test; do
	run_timed $t
done

# libvnet, the AM-II library over the endpoints, and its examples.
for t in am_test am_msg_test am_wait_test am_pin_test; do
	run_timed $t
done

# The tracepoints, as tracefs shows them.
run_timed trace_test.sh

# The ABI torture, last: a fixed time of everything at once.  Short here;
# the debug-kernel lane gives it longer.
VNET_TORTURE_SECONDS=${VNET_TORTURE_SECONDS:-30}
export VNET_TORTURE_SECONDS
run_timed torture

# rmmod must be refused while a file on /dev/vnet is open, and the module
# must then still work.
exec 3<>/dev/vnet
rmmod vnet 2>/dev/null
[ $? -ne 0 ] && [ -c /dev/vnet ]
check $? rmmod_refused_while_open
exec 3>&-

# Nothing in the kernel log that should not be there.
! dmesg | grep -E 'BUG:|WARNING:|Oops|general protection|INFO: task .* blocked|UBSAN|KASAN|sysfs: cannot|detected stall|soft lockup|hard LOCKUP' >&2
check $? kernel_log_clean

# With every endpoint closed and every NIC but the loopback one detached,
# vnet holds exactly the vmalloc areas it had after loading.
areas=$(grep -c '\[vnet\]' /proc/vmallocinfo)
echo "# vnet vmalloc areas: $vnet_areas after load, $areas after the tests"
[ "$areas" -eq "$vnet_areas" ] || grep '\[vnet\]' /proc/vmallocinfo >&2
[ "$areas" -eq "$vnet_areas" ]
check $? no_vnet_memory_left

rmmod vnet
check $? rmmod_after_close
[ ! -e /sys/class/vnet ] && [ ! -e /dev/vnet ]
check $? nothing_left_after_rmmod

# The module's own memory and the rest: a coarse guard, since the count
# moves with things like the kernel stacks of the tests' exited threads.
sleep 1
vmalloc_after=$(vmalloc_kb)
echo "# VmallocUsed - KernelStack before load $vmalloc_before kB, after unload $vmalloc_after kB"
[ $((vmalloc_after - vmalloc_before)) -lt 1024 ]
check $? no_vmalloc_leak

# Loading checks the same ranges as writing: a value out of range fails.
! insmod "$ko" max_retries=65536 2>/dev/null &&
	! insmod "$ko" poll_us=10001 2>/dev/null &&
	! insmod "$ko" frames=257 2>/dev/null && [ ! -e /sys/class/vnet ]
check $? load_refuses_out_of_range

# ifnames= attaches at load; rmmod with an attached NIC takes it away.
ip link add vnl0 type veth peer name vnl1 && ip link set vnl0 up &&
	insmod "$ko" ifnames=vnl0:7,nosuchif0 &&
	[ "$(cat /sys/class/vnet/vnet7/ifname)" = vnl0 ] &&
	dmesg | grep -q 'cannot attach nosuchif0' &&
	rmmod vnet && [ ! -e /sys/class/vnet ]
check $? attach_at_load
ip link del vnl0 2>/dev/null

echo "1..$n"
exit $failed
