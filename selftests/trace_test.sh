#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vnet's tracepoints, as an operator enables them through tracefs: a paging
# run on the loopback NIC, then servers paging on one NIC of a lossy veth
# pair with their clients on the other, then a request to an endpoint that
# does not exist and route changes.  The trace must hold each kind of event
# with fields that name what happened (Documentation/vnet/abi.rst,
# "Tracepoints").  Runs in the VM with vnet.ko loaded; prints TAP.

set -u
here=$(cd "$(dirname "$0")" && pwd)
vnetctl=$here/../tools/vnetctl/vnetctl
vnet_bench=$here/../tools/vnet-bench/vnet-bench
am_peers=$here/cluster/am_peers
tr=/sys/kernel/tracing
out=$(mktemp -d)
n=0
failed=0

ok()
{
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n trace.$2"
	else
		echo "not ok $n trace.$2"
		failed=1
	fi
}

# What each step left in the ring buffer goes to $out/trace, and the
# buffer starts empty for the next: no step's events overwrite another's.
keep()
{
	cat "$tr/trace" >>"$out/trace"
	echo >"$tr/trace"
}

# shellcheck disable=SC2317 # called through the EXIT trap
cleanup()
{
	echo 0 >"$tr/events/vnet/enable" 2>/dev/null
	echo "$buffer_kb" >"$tr/buffer_size_kb" 2>/dev/null
	[ -z "$record_cmd" ] || echo "$record_cmd" >"$tr/options/record-cmd"
	"$vnetctl" detach vnet1 2>/dev/null
	"$vnetctl" detach vnet2 2>/dev/null
	ip link del vtr0 2>/dev/null
	rm -rf "$out"
}
record_cmd=
trap cleanup EXIT

[ -d "$tr/events" ] || mount -t tracefs tracefs "$tr" 2>/dev/null
if [ ! -d "$tr/events/vnet" ]; then
	echo "1..0 # SKIP no vnet events in tracefs (CONFIG_TRACING off?)"
	exit 0
fi
buffer_kb=$(cat "$tr/buffer_size_kb")
# With record-cmd on, enabling and disabling any event also hooks and
# unhooks sched_switch and sched_wakeup, patching the scheduler's text
# while the other vCPU runs it; under QEMU's TCG that once left an int3
# behind that a wake-up hit (an oops in ttwu_do_activate).  The checks
# read no command names, so only vnet's own tracepoints are patched.
record_cmd=$(cat "$tr/options/record-cmd" 2>/dev/null)
[ -z "$record_cmd" ] || echo 0 >"$tr/options/record-cmd"
echo 8192 >"$tr/buffer_size_kb"
echo >"$tr/trace"
echo 1 >"$tr/events/vnet/enable"
[ "$(cat "$tr/events/vnet/enable")" = 1 ]
ok $? events_enabled

# 1. Paging on the loopback NIC: 4 endpoints a frame.
"$vnet_bench" paging --nic 0 --ratios 4 --seconds 1 --warmup 0.2 \
	>"$out/paging" 2>&1 &&
	awk '$1 == 4 && $6 > 0 && $9 == 0 { found = 1 } END { exit !found }' \
		"$out/paging"
ok $? paging_run
keep

# 2. 32 servers on NIC 1's 8 frames, their clients on NIC 2, through
# loss: refusals "not resident", retransmissions, RESUMEs.  The bench fails
# on a message returned; the NICs take five seconds of silence before one
# is "unreachable", not the suite's one, which a guest starved of CPU (the
# debug kernel beside other VMs) can spend without running a NIC's thread,
# and half a minute of refusals before one is "busy", which such a guest
# can spend bringing in 32 servers.  A NIC takes them when it is attached.
retries=/sys/module/vnet/parameters/max_retries
busy=/sys/module/vnet/parameters/busy_timeout_ms
old_retries=$(cat "$retries")
old_busy=$(cat "$busy")
modprobe veth && modprobe sch_netem && echo 250 >"$retries" &&
	echo 30000 >"$busy" &&
	ip link add vtr0 type veth peer name vtr1 &&
	ip link set vtr0 mtu 9000 up && ip link set vtr1 mtu 9000 up &&
	"$vnetctl" attach vtr0 --nic-id 1 --frames 8 >/dev/null &&
	"$vnetctl" attach vtr1 --nic-id 2 --frames 32 >/dev/null &&
	"$vnetctl" route add 2 "$(cat /sys/class/net/vtr1/address)" \
		--dev vnet1 &&
	"$vnetctl" route add 1 "$(cat /sys/class/net/vtr0/address)" \
		--dev vnet2 &&
	tc qdisc add dev vtr0 root netem loss 10% &&
	tc qdisc add dev vtr1 root netem loss 10%
ok $? lossy_wire_up
echo "$old_retries" >"$retries"
echo "$old_busy" >"$busy"
"$vnet_bench" vnets --nic 1 --client-nic 2 --clients 32 --seconds 2 \
	--warmup 0.5 >"$out/vnets" 2>&1
rc=$?
[ $rc -eq 0 ] || sed 's/^/# /' "$out/vnets"
ok $rc lossy_wire_run
keep

# 3. A request to an endpoint NIC 1 does not have: returned to its sender.
VNET_PEERS="1:60000:5" "$am_peers" send 2 --count 1 >"$out/returned" 2>&1
grep -q "^peer 1:60000 sent 1 .* returned 1 " "$out/returned"
ok $? request_to_no_endpoint_returned

# 4. Route changes, some refused: by the firmware, and before it.
"$vnetctl" route del 2 --dev vnet1 &&
	! "$vnetctl" route del 2 --dev vnet1 2>/dev/null &&
	! "$vnetctl" route add 2 "$(cat /sys/class/net/vtr1/address)" \
		--dev vnet9 2>/dev/null
ok $? route_deleted_then_refused

echo 0 >"$tr/events/vnet/enable"
keep
lost=$(cat "$tr"/per_cpu/cpu*/stats 2>/dev/null |
	awk '/^overrun:/ { n += $2 } END { print n + 0 }')
echo "# $(grep -c ': vnet_' "$out/trace") events traced, $lost overwritten"

# Each check: a name and a pattern (ERE) that a line of the trace must
# match.  The fields come from the TP_printk formats in drivers/vnet/trace.h.
mac1=$(cat /sys/class/net/vtr1/address 2>/dev/null)
mac0=$(cat /sys/class/net/vtr0/address 2>/dev/null)
expect()
{
	grep -Eq "$2" "$out/trace"
	ok $? "$1"
}
expect fault_on_loopback 'vnet_fault: vnet0 ep [0-9]+ frame [0-7] victim (-1|[0-9]+)'
expect evict_for_a_newcomer 'vnet_evict: vnet0 ep ([0-9]+) frame [0-7] for [0-9]+ \((un)?served\) unload [0-9]+ ns'
expect flush_before_eviction 'vnet_flush: vnet1 ep [0-9]+ frame [0-7] unresolved [0-9]+ waited [0-9]+ ns err 0'
expect nack_sent_not_resident 'vnet_nack: vnet1 refused NIC 2 channel [0-9]+ seq [0-9]+ not_resident'
expect nack_received_not_resident 'vnet_nack: vnet2 refused by NIC 1 channel [0-9]+ seq [0-9]+ not_resident'
expect retransmit_on_timer 'vnet_retransmit: vnet[12] to NIC [12] channel [0-9]+ seq [0-9]+ retries [1-9][0-9]*$'
expect retransmit_on_resume 'vnet_retransmit: vnet2 to NIC 1 channel [0-9]+ seq [0-9]+ retries [0-9]+ \(resume\)'
expect returned_no_endpoint 'vnet_returned: vnet2 ep [0-9]+ to 1:60000 no_endpoint'
expect route_added "vnet_route: vnet1 add NIC 2 at $mac1 err 0"
expect route_added_back "vnet_route: vnet2 add NIC 1 at $mac0 err 0"
expect route_deleted 'vnet_route: vnet1 del NIC 2 at 00:00:00:00:00:00 err 0'
expect route_del_refused 'vnet_route: vnet1 del NIC 2 at 00:00:00:00:00:00 err -2'
expect route_add_to_no_nic_refused "vnet_route: vnet9 add NIC 2 at $mac1 err -19"
# An evicted endpoint is never its own newcomer.
! grep -E 'vnet_evict: vnet[0-9]+ ep ([0-9]+) frame [0-9]+ for \1 ' "$out/trace" >/dev/null
ok $? evict_never_for_itself
if [ "$failed" -ne 0 ]; then
	echo "# the trace's first lines of each event:"
	for e in fault evict flush nack retransmit returned route; do
		grep -m 3 ": vnet_$e:" "$out/trace" | sed 's/^/#   /'
	done
fi
echo "1..$n"
exit $failed
