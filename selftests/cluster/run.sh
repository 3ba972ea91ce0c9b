#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The cluster selftest, run on the host inside a cluster of at least three
# nodes (make check-cluster):
#
#   tools/vm/cluster --nodes 4 -- selftests/cluster/run.sh
#
# Every node loads vnet.ko, attaches eth0 as NIC K+1 and routes every other
# node's NIC to that node's address; each serves requests with am_peers.
# Then, with am_peers sending medium requests between the nodes:
#   1. every ordered pair of nodes: each request answered and delivered
#      exactly once;
#   2. the last node power-cut while the others send to it: what was on
#      the wire to it comes back unreachable, what it had taken goes down
#      unanswered with it, nothing is resolved twice, the survivors'
#      traffic among themselves stays exactly-once, and every request
#      sent to the dead node afterwards comes back unreachable;
#   3. that node booted again: every pair exactly-once again;
#   4. node 1's link cut for a second and restored under traffic: no
#      request lost, none doubled, and requests to and from node 1 waited
#      for the link;
# and at last every server saw no duplicate and no corrupt payload, every
# node's kernel log is clean and vnet unloads.
#
# Prints TAP; the exit status is non-zero if anything failed.
#
#   VNET_KO    module to load (default: the tree's vnet.ko)

# No -e: a failed check is reported, and the next one still runs.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../.." && pwd)
ko=${VNET_KO:-$tree/vnet.ko}
am=$here/am_peers
vnetctl=$tree/tools/vnetctl/vnetctl
nodes=${VNET_NODES:-0}
# Messages to a silent NIC come back after 100 transmissions 20 ms apart:
# 2 s, well past the link cut of step 4 (cut_s), and short enough for
# step 2.
params="max_retries=100 retrans_ms=20"
victim=$((nodes - 1))
cut=1
cut_s=1

n=0
failed=0
out=$(mktemp -d)
trap 'rm -rf -- "$out"' EXIT

c()
{
	"$VNET_CLUSTER" "$@"
}

# A TAP line for status $1, described by the words after $2; on failure,
# file $2 (if not empty) goes before it as comments, where
# tools/testing/check looks for what a failed test said.
check()
{
	local status=$1 file=$2

	shift 2
	n=$((n + 1))
	if [ "$status" -eq 0 ]; then
		echo "ok $n $*"
	else
		[ -z "$file" ] || sed 's/^/# /' "$file"
		echo "not ok $n $*"
		failed=1
	fi
}

mac()
{
	printf '52:54:00:76:6e:%02x' "$1"
}

if [ -z "${VNET_CLUSTER:-}" ] || ((nodes < 3)); then
	echo "Bail out! run in a cluster of 3 or more nodes:" \
	     "tools/vm/cluster --nodes 4 -- $0"
	exit 1
fi

# ---------------------------------------------------------------------------
# Nodes and servers

# Node $1: vnet loaded, eth0 attached as NIC $1 + 1, routes to the others.
node_up()
{
	local k=$1 j cmd

	cmd="insmod $ko $params && $vnetctl attach eth0 --nic-id $((k + 1))"
	for ((j = 0; j < nodes; j++)); do
		((j == k)) || cmd+=" && $vnetctl route add $((j + 1)) $(mac "$j")"
	done
	c run "$k" sh -c "$cmd" >"$out/up.$k" 2>&1
}

nodes_up()
{
	local k pids=()

	for k; do
		node_up "$k" &
		pids[k]=$!
	done
	for k; do
		wait "${pids[k]}"
		check $? "$out/up.$k" "node $k: vnet loaded, eth0 attached" \
			"as NIC $((k + 1)), routes to the others"
	done
}

server_pid=()
peer=()

# An am_peers server on node $1, its pid in the guest in /tmp/am_peers.pid.
server_start()
{
	local k=$1 t

	# shellcheck disable=SC2016 # expanded on the node
	c run "$k" sh -c 'echo $$ >/tmp/am_peers.pid && exec "$0" serve "$1"' \
		"$am" $((k + 1)) >"$out/server.$k" 2>&1 &
	server_pid[k]=$!
	peer[k]=
	for ((t = 0; t < 600; t++)); do
		peer[k]=$(awk '$1 == "serving" {
				sub("^0x", "", $4); print $2 ":" $4; exit
			}' "$out/server.$k" 2>/dev/null)
		[ -n "${peer[k]}" ] && break
		kill -0 "${server_pid[k]}" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "${peer[k]}" ]
	check $? "$out/server.$k" "node $k: am_peers serving"
}

# Stop node $1's server; it fails if it saw a duplicate or a corrupt payload.
server_stop()
{
	local k=$1

	# shellcheck disable=SC2016 # expanded on the node
	c run "$k" sh -c 'kill -TERM "$(cat /tmp/am_peers.pid)"'
	wait "${server_pid[k]}"
	check $? "$out/server.$k" \
		"node $k: its server took no request twice, none corrupt"
	grep '^served' "$out/server.$k" | sed 's/^/# node '"$k"': /'
}

# ---------------------------------------------------------------------------
# Traffic

client_pid=()

# am_peers on node $1 sending to the servers of nodes $2 (a list), with
# the options that follow; its output in $out/client.$1.
client_start()
{
	local k=$1 to=$2 list='' j
	shift 2

	for j in $to; do
		list+="${peer[j]} "
	done
	c run "$k" env VNET_PEERS="$list" "$am" send $((k + 1)) "$@" \
		>"$out/client.$k" 2>&1 &
	client_pid[k]=$!
}

# Node $1's client ended well: no request answered or returned twice, and
# each server it asked took exactly what it answered (am_peers.c).
client_wait()
{
	local k=$1

	wait "${client_pid[k]}"
	check $? "$out/client.$k" \
		"$2: node $k's client saw nothing resolved twice"
}

# Sets the counts that node $1's client printed for the server of node $2,
# or -1 if it printed none.
result()
{
	local line

	sent=-1 replied=-1 unreachable=-1 returned=-1 unanswered=-1
	dupreplies=-1 slowest=-1 delivered=-1 duplicates=-1 corrupt=-1
	line=$(grep "^peer $(($2 + 1)) " "$out/client.$1") || return 1
	read -r _ _ _ sent _ replied _ unreachable _ returned _ unanswered \
		_ dupreplies _ slowest _ delivered _ duplicates _ corrupt \
		<<<"$line"
}

# Node $2's requests to node $3, in step $1: each answered once, and node
# $3 took each exactly once, intact.
exactly_once()
{
	result "$2" "$3" &&
		((sent > 0 && replied == sent && unreachable == 0 &&
		  returned == 0 && unanswered == 0 && dupreplies == 0)) &&
		[ "$delivered" = "$sent" ] && [ "$duplicates" = 0 ] &&
		[ "$corrupt" = 0 ]
	check $? "$out/client.$2" "$1: node $2 -> node $3: $sent requests," \
		"each answered and delivered once"
}

# The nodes in $1 but $2.
others()
{
	local j

	for j in $1; do
		[ "$j" = "$2" ] || printf '%s ' "$j"
	done
}

# Step $1: every node in $2 sends to every other one, with options $3...
all_pairs()
{
	local step=$1 set=$2 k j
	shift 2

	for k in $set; do
		client_start "$k" "$(others "$set" "$k")" "$@"
	done
	for k in $set; do
		client_wait "$k" "$step"
	done
	for k in $set; do
		for j in $(others "$set" "$k"); do
			exactly_once "$step" "$k" "$j"
		done
	done
}

stat_sum()
{
	local k total=0 v

	for k in $1; do
		v=$(c run "$k" cat "/sys/class/vnet/vnet$((k + 1))/stats/$2") || v=0
		total=$((total + v))
	done
	echo "$total"
}

# ---------------------------------------------------------------------------

all=$(seq 0 $((nodes - 1)) | tr '\n' ' ')
survivors=$(others "$all" "$victim")

# shellcheck disable=SC2086 # lists of node numbers
nodes_up $all
for k in $all; do
	server_start "$k"
done

all_pairs "pairs" "$all" --count 100

# 2. Power cut: the survivors send to everyone for a while, the victim's
# plug is pulled meanwhile.  What was on the wire to it comes back
# unreachable; what it had taken but not answered went down with it: as
# many as a client had requests in flight, 4 (am_peers.c).
for k in $survivors; do
	client_start "$k" "$(others "$all" "$k")" --seconds 8
done
sleep 3
c kill "$victim"
check $? "" "power cut: node $victim killed under traffic"
wait "${server_pid[victim]}" 2>/dev/null
for k in $survivors; do
	client_wait "$k" "power cut"
done
for k in $survivors; do
	for j in $(others "$survivors" "$k"); do
		exactly_once "power cut" "$k" "$j"
	done
	result "$k" "$victim"
	((replied > 0 && returned == 0 && dupreplies == 0 &&
	  unanswered <= 4 && replied + unreachable + unanswered == sent))
	check $? "$out/client.$k" "power cut: node $k -> node $victim:" \
		"$replied answered, $unreachable unreachable," \
		"$unanswered lost with it"
done

# And every request sent to it now comes back unreachable.
for k in $survivors; do
	client_start "$k" "$victim" --count 3
done
for k in $survivors; do
	client_wait "$k" "dead node"
	result "$k" "$victim"
	((sent == 3 && unreachable == 3))
	check $? "$out/client.$k" "dead node: node $k -> node $victim:" \
		"$unreachable of $sent requests unreachable"
done

# 3. The victim boots again, with a new server: traffic to it resumes.
c boot "$victim"
check $? "" "reboot: node $victim up again"
nodes_up "$victim"
server_start "$victim"
retrans=$(stat_sum "$all" retransmits)
all_pairs "reboot" "$all" --count 50
retrans=$(($(stat_sum "$all" retransmits) - retrans))
echo "# retransmissions without a cut: $retrans"

# 4. Node $cut's link cut and restored while everyone sends.
retrans=$(stat_sum "$all" retransmits)
for k in $all; do
	client_start "$k" "$(others "$all" "$k")" --seconds 6
done
sleep 2
c link "$cut" down
check $? "" "link cut: node $cut's switch port down"
sleep "$cut_s"
c link "$cut" up
check $? "" "link cut: node $cut's switch port up again"
for k in $all; do
	client_wait "$k" "link cut"
done
for k in $all; do
	for j in $(others "$all" "$k"); do
		exactly_once "link cut" "$k" "$j"
	done
done
retrans=$(($(stat_sum "$all" retransmits) - retrans))
echo "# retransmissions with the cut: $retrans"
# Traffic to and from node $cut was in flight when its port went down, and
# waited for it: the cut was a cut, not a blink between two messages.
for k in $all; do
	for j in $(others "$all" "$k"); do
		[ "$k" = "$cut" ] || [ "$j" = "$cut" ] || continue
		result "$k" "$j"
		awk -v t="$slowest" -v cut="$cut_s" 'BEGIN { exit !(t >= cut / 2) }'
		check $? "$out/client.$k" "link cut: node $k -> node $j:" \
			"a request waited it out (slowest $slowest s)"
	done
done

# 5. Servers, kernel logs, unloading.
for k in $all; do
	server_stop "$k"
done
bad_log='BUG:|WARNING:|Oops|general protection|INFO: task .* blocked'
bad_log+='|UBSAN|KASAN'
for k in $all; do
	c run "$k" sh -c "! dmesg | grep -E '$bad_log'" >"$out/dmesg.$k" 2>&1
	check $? "$out/dmesg.$k" "node $k: kernel log clean"
	c run "$k" sh -c "$vnetctl detach vnet$((k + 1)) && rmmod vnet &&
		[ ! -e /sys/class/vnet ]" >"$out/rmmod.$k" 2>&1
	check $? "$out/rmmod.$k" "node $k: vnet detached and unloaded"
done

echo "1..$n"
exit $failed
