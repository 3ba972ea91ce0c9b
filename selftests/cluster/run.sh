#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster selftest, run on the host inside a cluster of four nodes
# (make check-cluster):
#
#   tools/vm/cluster --nodes 4 -- selftests/cluster/run.sh
#
# First as a cluster that runs no mapper: every node attaches eth0 as NIC
# K+1 and routes the others' NICs to their addresses by hand.
#   0. every ordered pair of nodes exchanges requests exactly once
#      (am_peers), and requests to a NIC routed to an address nobody has
#      come back unreachable after the transport's retries; then vnet is
#      detached and unloaded everywhere.
# Then with vnet-mapd (mapd_steps.sh): every node loads vnet again,
# attaches eth0 without an id and runs the daemon, all started at one
# moment (a cold start), with mapd_watch recording every version of each
# node's state file.
#   1. the mappers converge within the cold-start bound: one leader (node
#      0, the lowest MAC), one table, one id per node, each NIC routing
#      exactly the other nodes;
#   2. every ordered pair exactly once;
#   3. node 3 power-cut while the others send to everyone: among the
#      survivors, exactly once; to node 3, every request is answered, or
#      comes back unreachable within the bound of node 3's last reply, or
#      is one that node 3 had taken (at most the four a client has in
#      flight: its sender's NIC holds it no more, so nothing can return
#      it); every survivor withdrew the route within the bound of node 3's
#      last HELLO; requests sent to it afterwards come back at once;
#   4. node 3 booted again: its mapper has its old id back, and every pair
#      exchanges exactly once again;
#   5. the leader's link cut for a quarter of dead_ms under traffic:
#      nothing lost or doubled, nobody declared dead;
#   6. the leader's daemon killed: node 1 leads within the bound; started
#      again while nodes 1 to 3 talk, it takes no route from them, is back
#      with its id and leads again; every pair exactly once;
#   7. 32 endpoints on 8 frames on every node, traffic between all of them
#      and 10% loss (netem) on every node's link: exactly once, endpoints
#      paged in and out, nobody declared dead;
# and at last every server saw no duplicate and no corrupt payload, every
# kernel log is clean, every daemon stops cleanly and vnet unloads.
#
# Prints TAP, with the measured times as comments; exits non-zero if
# anything failed.  Every deadline is a bound of Documentation/vnet/
# mapd.rst for the heartbeat and dead time below, plus SLACK_MS for a
# guest that TCG runs late.  Times across nodes are taken on the host's
# clock (mapd_state.py stamp).  The nodes' logs and the state files'
# versions stay in build/cluster/.
#
#   VNET_KO        module to load (default: the tree's vnet.ko)
#   VNET_CLUSTER_FAULTS  0: stop after step 2 (the fault-free steps);
#                  1 (default): every step
#   SLACK_MS       allowance for TCG (default 1500)

# No -e: a failed check is reported, and the next one still runs.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../.." && pwd)
ko=${VNET_KO:-$tree/vnet.ko}
faults=${VNET_CLUSTER_FAULTS:-1}
nodes=${VNET_NODES:-0}
node_sh=$here/mapd_node.sh
state_py=$here/mapd_state.py
out=$tree/build/cluster

# Heartbeat H and dead time D.  D is eight heartbeats rather than the
# daemon's four.  In step 7 every node loses 10% of its frames, its HELLOs
# too, and four lost in a row (a 10^-4 chance, some thousand chances a
# run) would kill a node that is alive.  And on a two-core host that other
# VMs load to 8, a guest is not run for up to 1.3 s now and then: its
# peers then hear nothing for that plus H, which must stay short of D.
hb=250
dead=2000
tick=$((hb / 4))
# A guest's lateness on a loaded host: it was seen not to run for 1.3 s.
# Still short of the transport's retries, so a death's returns within
# dead_bound + slack come from the mapper.
slack=${SLACK_MS:-1500}
# mapd.rst, "Bounds": the lowest MAC leads at its first tick 2H after its
# start and publishes, so every node has a table within 2H + H/4 of the
# last start; a dead node is withdrawn within D + H/4 of its last HELLO,
# by every survivor; the next leader publishes within D + H/4 of the old
# one's last HELLO, and a member whose tick had not yet given up on the
# old leader has the new table H/4 + H/2 + H/4 later; a newcomer has the
# table at the leader's next tick, H + H/4 later if one chunk is lost.
cold_bound=$((2 * hb + tick))
dead_bound=$((dead + tick))
elect_bound=$((dead + tick))
elect_member_bound=$((dead + tick + tick + hb / 2 + tick))
join_bound=$((hb + tick))
# The transport alone gives up on a silent NIC after max_retries times
# retrans_ms without an answer: 5.1 s, well past dead_bound + slack, so
# a request back within that came back because its route was withdrawn.
max_retries=255 retrans_ms=20 busy_ms=5000
params="frames=8 max_retries=$max_retries retrans_ms=$retrans_ms"
params+=" busy_timeout_ms=$busy_ms"
giveup_ms=$((max_retries * retrans_ms))
# A message is taken or back within its lifetime (abi.rst), busy_timeout_ms
# + 2 * max_retries * retrans_ms: 15.2 s.  In step 7, where nobody dies, a
# client gives a server up only after a request and then its reply could
# each have taken that long.
lifetime_ms=$((busy_ms + 2 * giveup_ms))
paging_stall=$(((2 * lifetime_ms + 999) / 1000))
# The link cut of step 5: a quarter of D.  A peer heard the node at most H
# before the cut, so it hears nothing for 750 ms, which leaves 1250 ms of
# D for a guest that TCG runs late; and it is 25 times the retransmission
# time, so every message to or from the node is sent again and again, and
# must still arrive once.
cut_ms=$((dead / 4))
victim=3
paging_eps=8		# server endpoints per node in step 7, clients 24

rm -rf -- "$out"
mkdir -p -- "$out" || exit 1
stamper=
trap '[ -z "$stamper" ] || kill "$stamper"' EXIT

# shellcheck source=selftests/cluster/lib.sh
. "$here/lib.sh"

if [ -z "${VNET_CLUSTER:-}" ] || ((nodes != 4)); then
	echo "Bail out! run in a cluster of 4 nodes:" \
	     "tools/vm/cluster --nodes 4 -- $0"
	exit 1
fi

# shellcheck source=selftests/cluster/mapd_steps.sh
. "$here/mapd_steps.sh"

all="0 1 2 3"
survivors=$(others "$all" "$victim")

# Step 0: routes set by hand.  NIC 9 is routed, on node 0, to an address
# no node has.
manual_routes()
{
	local k j cmd pids=() ghost=9 to

	for k in $all; do
		nic[k]=$((k + 1))
		cmd="$(load_vnet) && $vnetctl attach eth0 --nic-id $((k + 1))"
		for j in $(others "$all" "$k"); do
			cmd+=" && $vnetctl route add $((j + 1)) $(mac "$j")"
		done
		((k)) || cmd+=" && $vnetctl route add $ghost $(mac "$ghost")"
		c run "$k" sh -c "$cmd" >"$out/up.$k" 2>&1 &
		pids[k]=$!
	done
	for k in $all; do
		wait "${pids[k]}"
		check $? "$out/up.$k" "manual: node $k: eth0 attached as NIC" \
			"$((k + 1)), routes to the others set by hand"
	done
	for k in $all; do
		server_start main "$k" "${nic[k]}"
	done
	for k in $all; do
		to=$(endpoints_of main "$(others "$all" "$k")")
		((k)) || to+="$ghost:0:0"
		client_start "$k" "${nic[k]}" "$to" --count 30
	done
	for k in $all; do
		client_wait "$k" "manual"
	done
	for k in $all; do
		for j in $(others "$all" "$k"); do
			exactly_once "manual" "$k" "$(ep_of "$j")" "$j"
		done
	done
	# Nobody answers, nobody withdraws the route: the transport tries
	# for max_retries quanta before it gives up.
	result 0 "$ghost:0" && ((sent > 0 && unreachable == sent)) &&
		(($(ms_of "$slowest") >= giveup_ms * 9 / 10))
	check $? "$out/client.0" "manual: node 0 -> NIC $ghost (an address" \
		"nobody has): $unreachable of $sent requests back unreachable," \
		"the last after $slowest s (the transport's retries:" \
		"$giveup_ms ms and more, as TCG runs its timer late)"
	servers_stop main "$all"
	on_each "$all" unload "manual: node NODE: vnet detached and unloaded"
}

# Node $1's daemon stopped: it says so in its log.
# shellcheck disable=SC2317 # called through on_each
mapd_stop()
{
	c run "$1" "$node_sh" stop &&
		grep 'vnet-mapd\[eth0\]: stopped$' "$out/mapd.$1.${gen[$1]}.log"
}

echo "# heartbeat $hb ms, dead after $dead ms, slack $slack ms for TCG"
phase_start
manual_routes
phase "0 (routes by hand)"
python3 "$state_py" stamp "$out" &
stamper=$!
# shellcheck disable=SC2086 # lists of node numbers
nodes_up $all
cold_start
for k in $all; do
	server_start main "$k" "${nic[k]}"
done
all_pairs "pairs" "$all" main --count 50
phase "1-2 (cold start, pairs)"
if ((faults)); then
	power_cut
	phase "3 (power cut)"
	rejoin
	phase "4 (reboot)"
	link_cut 0
	phase "5 (link cut)"
	leader_change
	servers_stop main "$all"
	phase "6 (leader)"
	paging
	phase "7 (paging through loss)"
	servers_stop page "$all"
	replies_taken page "$all"
else
	servers_stop main "$all"
	n=$((n + 1))
	echo "ok $n # SKIP steps 3-7 (power cut, reboot, link cut, leader change, paging through loss): VNET_CLUSTER_FAULTS=0"
fi

# Kernel logs, daemons, unloading.
on_each "$all" kernel_log_clean "node NODE: kernel log clean"
on_each "$all" mapd_stop "node NODE: vnet-mapd stopped cleanly on SIGTERM"
on_each "$all" unload "node NODE: vnet detached and unloaded"
phase "the end"

echo "# Measured (heartbeat $hb ms, dead after $dead ms):"
for f in "${figures[@]}"; do
	echo "#   $f"
done
echo "1..$n"
exit $failed
