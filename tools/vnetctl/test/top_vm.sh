#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vnetctl top against the real module, inside the test VM:
#
#   tools/vm/run --timeout 600 -- tools/vnetctl/test/top_vm.sh
#
# Loads vnet.ko and keeps NIC 0 paging with vnet-bench paging (four endpoints
# per frame) in the background, then checks
#   - top --once --json: the rates are positive numbers, no larger than
#     what sysfs counted around the run, and the endpoints' add up to the
#     NIC's;
#   - with the traffic stopped (SIGSTOP), top's frames, resident and
#     endpoint counts and each endpoint's state and frame are sysfs's;
#   - top in tmux: the screen shows the NIC line and the endpoints, q ends
#     it with status 0, SIGINT too, and the terminal is as it was before
#     (stty settings, cursor shown, lines wrapping).
# TAP on stdout; the exit status is non-zero if anything failed.
#
#   VNET_KO    module to load (default: the tree's vnet.ko)

# cleanup, start and stopped run from the trap and from check.
# shellcheck disable=SC2317

set -u
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../../.." && pwd)
vnetctl=$tree/tools/vnetctl/vnetctl
vnet_bench=$tree/tools/vnet-bench/vnet-bench
ko=${VNET_KO:-$tree/vnet.ko}
sys=/sys/class/vnet/vnet0
dir=$(mktemp -d)
n=0
failed=0
bench=

cleanup() {
	if [ -n "$bench" ]; then
		kill -CONT "$bench" 2>/dev/null
		kill "$bench" 2>/dev/null
		wait "$bench" 2>/dev/null
	fi
	tmux kill-server 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

# check NAME COMMAND...: one TAP line for COMMAND's exit status.
check() {
	local name=$1

	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		failed=1
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

sum_sent() {
	cat "$sys"/endpoints/*/sent 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}

# The checks of top's JSON; reasons go to stdout as TAP comments.
cat > "$dir/check.py" <<'EOF'
import json, math, os, sys

def fail(msg):
    print("# " + msg)
    sys.exit(1)

def load(path):
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    if len(lines) != 1:
        fail("%d JSON documents, not one" % len(lines))
    doc = json.loads(lines[0])
    if "tag" in lines[0]:
        fail("a tag in the output")
    nics = [x for x in doc["nics"] if x["name"] == "vnet0"]
    if not nics:
        fail("no vnet0")
    return doc, nics[0]

def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) \
        and math.isfinite(x)

def rates(path, sent0, sent1):
    doc, nic = load(path)
    if not num(doc["seconds"]) or doc["seconds"] <= 0:
        fail("seconds %r" % doc["seconds"])
    for k in ("sent_per_s", "received_per_s", "faults_per_s",
              "evictions_per_s"):
        if not num(nic[k]) or nic[k] <= 0:
            fail("vnet0 %s is %r, not a positive number" % (k, nic[k]))
    if not num(nic.get("retransmits_per_s", 0)) or \
       nic.get("retransmits_per_s", 0) < 0:
        fail("retransmits_per_s %r" % nic.get("retransmits_per_s"))
    eps = nic["endpoints"]
    if not eps:
        fail("no endpoints")
    for ep in eps:
        for k in ("sent_per_s", "received_per_s", "returned_per_s",
                  "faults_per_s", "evictions_per_s"):
            if not num(ep[k]) or ep[k] < 0:
                fail("%s %s is %r" % (ep["id"], k, ep[k]))
    act = [ep["sent_per_s"] + ep["received_per_s"] for ep in eps]
    if any(a < b - 0.01 for a, b in zip(act, act[1:])):
        fail("endpoints not busiest first: %r" % act)
    if act[0] <= 0:
        fail("the busiest endpoint did nothing")
    total = sum(ep["sent_per_s"] for ep in eps)
    if abs(total - nic["sent_per_s"]) > 0.01 * len(eps) + 1e-6:
        fail("endpoints send %.3f/s, the NIC %.3f/s" % (total, nic["sent_per_s"]))
    # top's two samples lie between the script's two reads of sysfs.
    counted = nic["sent_per_s"] * doc["seconds"]
    if counted > sent1 - sent0 + 0.5 * len(eps):
        fail("top counted %.1f messages sent, sysfs %d around it" %
             (counted, sent1 - sent0))
    print("# vnet0: %.1f sent/s, %.1f received/s, %.1f faults/s, "
          "%.1f evictions/s over %.3f s; sysfs: %d sent around it" %
          (nic["sent_per_s"], nic["received_per_s"], nic["faults_per_s"],
           nic["evictions_per_s"], doc["seconds"], sent1 - sent0))

def counts(path, frames, resident, nr, listing):
    doc, nic = load(path)
    got = (nic["frames"], nic["resident"], nic["endpoints_count"])
    want = (int(frames), int(resident), int(nr))
    if got != want:
        fail("frames, resident, endpoints: top %r, sysfs %r" % (got, want))
    sysfs = {}
    for l in open(listing).read().splitlines():
        idx, state, frame = l.split()
        sysfs[int(idx)] = (state, int(frame))
    top = {ep["index"]: (ep["state"], ep["frame"]) for ep in nic["endpoints"]}
    if top != sysfs:
        fail("endpoints: top %r, sysfs %r" % (sorted(top.items()),
                                             sorted(sysfs.items())))
    print("# vnet0: frames %d, resident %d, %d endpoints, as sysfs" % want)

if sys.argv[1] == "rates":
    rates(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
else:
    counts(*sys.argv[2:])
EOF

# Each endpoint's index, state and frame, from sysfs.
listing() {
	local e

	for e in "$sys"/endpoints/*/; do
		[ -d "$e" ] || continue
		echo "$(basename "$e") $(cat "$e/state") $(cat "$e/frame")"
	done | sort -n
}

counts_snapshot() {
	echo "$(cat $sys/frames) $(cat $sys/resident) $(cat $sys/nr_endpoints)"
	listing
}

# vnet.ko's checksum is the kernel's crc32c(); insmod does not load it.
modprobe libcrc32c
dmesg -C
insmod "$ko"
check "insmod vnet.ko" test -d "$sys"
[ -d "$sys" ] || { echo "Bail out! no $sys"; exit 1; }
frames=$(cat "$sys/frames")

# vnet-bench paging in the background, its endpoints all made; sets bench.
want=$((4 * frames))
start_bench() {
	"$vnet_bench" paging --ratios 4 --seconds 120 --warmup 0 \
		> "$dir/bench.out" 2>&1 &
	bench=$!
	for _ in $(seq 100); do
		[ "$(cat "$sys/nr_endpoints")" -ge "$want" ] && break
		sleep 0.2
	done
	sleep 1
	test "$(cat "$sys/nr_endpoints")" -eq "$want"
}

check "vnet-bench paging runs $want endpoints on $frames frames" start_bench

# (a) rates while the traffic runs
sent0=$(sum_sent)
"$vnetctl" top --once --json > "$dir/rates.json"
rc=$?
sent1=$(sum_sent)
check "top --once --json exits 0" test $rc -eq 0
check "top --once --json: positive rates, consistent with sysfs" \
	python3 "$dir/check.py" rates "$dir/rates.json" "$sent0" "$sent1"

# (a) counts, with the traffic stopped so that sysfs holds still
kill -STOP "$bench"
stable=1
for _ in 1 2 3 4 5; do
	sleep 0.5
	counts_snapshot > "$dir/before"
	"$vnetctl" top --once --json --interval 0.3 > "$dir/counts.json"
	counts_snapshot > "$dir/after"
	cmp -s "$dir/before" "$dir/after" && { stable=0; break; }
done
kill -CONT "$bench"
# Its watchdog may take a stop that long on a loaded host for a stall.
kill "$bench" 2>/dev/null
wait "$bench" 2>/dev/null
check "sysfs holds still with the traffic stopped" test $stable -eq 0
read -r f r e < "$dir/before"
tail -n +2 "$dir/before" > "$dir/listing"
check "top --once --json: frames, resident, endpoints as in sysfs" \
	python3 "$dir/check.py" counts "$dir/counts.json" "$f" "$r" "$e" \
	"$dir/listing"

# (b) interactive, in tmux
# start NAME: top in a tmux pane that records the terminal's settings
# before and after, and top's exit status; sets toppid.
start() {
	local s=$1 sh

	TERM=xterm tmux -f /dev/null new-session -d -s "$s" -x 100 -y 30 \
		"sh -c 'stty -g > $dir/$s.before; $vnetctl top --interval 0.5; echo \$? > $dir/$s.rc; stty -g > $dir/$s.after; exec sleep 600'"
	sh=$(tmux display -p -t "$s" '#{pane_pid}')
	toppid=
	for _ in $(seq 50); do
		toppid=$(pgrep -P "$sh" -x vnetctl) && break
		sleep 0.1
	done
	# The first screen comes after one interval; TCG is slow.
	for _ in $(seq 100); do
		tmux capture-pane -p -t "$s" > "$dir/$s.screen"
		grep -q '^vnet0 ' "$dir/$s.screen" && break
		sleep 0.1
	done
	[ -n "$toppid" ]
}

# stopped NAME: top is gone, said 0, and left the terminal as it found it.
stopped() {
	local s=$1

	for _ in $(seq 50); do
		[ -s "$dir/$s.rc" ] && [ -s "$dir/$s.after" ] && break
		sleep 0.1
	done
	! kill -0 "$toppid" 2>/dev/null || { echo "# $toppid still runs"; return 1; }
	[ "$(cat "$dir/$s.rc" 2>/dev/null)" = 0 ] ||
		{ echo "# status '$(cat "$dir/$s.rc" 2>/dev/null)'"; return 1; }
	cmp -s "$dir/$s.before" "$dir/$s.after" ||
		{ echo "# stty settings changed"; return 1; }
	[ "$(tmux display -p -t "$s" '#{cursor_flag}#{wrap_flag}')" = 11 ] ||
		{ echo "# cursor hidden or wrapping off"; return 1; }
}

if ! command -v tmux > /dev/null; then
	skip "top in tmux" "tmux not installed (make setup)"
else
	check "vnet-bench paging runs again" start_bench
	check "top starts in tmux" start top
	sed 's/^/# /' "$dir/top.screen"
	check "the screen shows vnet0 with its rates" \
		grep -qE '^vnet0 +0 +[0-9]+\.[0-9] +[0-9]+\.[0-9] ' "$dir/top.screen"
	check "the screen shows vnet0's endpoints" \
		grep -qE '^0:[0-9]+ +(resident|nonresident|loading|unloading) ' \
		"$dir/top.screen"
	check "the screen says how to quit" grep -q 'q quits' "$dir/top.screen"
	tmux send-keys -t top q
	check "q ends top, status 0, terminal restored" stopped top

	check "top starts in tmux again" start int
	kill -INT "$toppid"
	check "SIGINT ends top, status 0, terminal restored" stopped int

	check "top starts in tmux a third time" start quit
	kill -QUIT "$toppid"
	check "SIGQUIT ends top, status 0, terminal restored" stopped quit
fi

kill "$bench" 2>/dev/null
wait "$bench" 2>/dev/null
bench=
! dmesg | grep -E 'BUG:|WARNING:|Oops|general protection|UBSAN|KASAN' >&2
check "kernel log clean" test $? -eq 0
rmmod vnet

exit $failed
