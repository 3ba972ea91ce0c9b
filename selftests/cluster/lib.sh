# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034 # here, tree, out set by the sourcing
# script, which uses vnetctl, failed and what result() sets
#
# selftests/cluster/lib.sh - what the cluster selftest's steps (run.sh,
# with routes set by hand, and mapd_steps.sh, with vnet-mapd) share: TAP
# lines, am_peers servers and clients on the nodes, and what the clients
# printed.  Sourced; the sourcing script sets here (this directory), tree
# (the top of the tree), out (a directory for the commands' output), ko
# (the module) and params (its parameters), and then nic[K], the id of
# node K's NIC.

am=$here/am_peers
vnetctl=$tree/tools/vnetctl/vnetctl
n=0
failed=0
nic=()

c()
{
	"$VNET_CLUSTER" "$@"
}

# The shell command that loads vnet on a node, with the module parameters
# $params.  insmod loads no dependency, and vnet.ko calls the kernel's
# crc32c(), which distribution kernels build as a module (libcrc32c).
load_vnet()
{
	echo "modprobe libcrc32c && insmod $ko $params"
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

# The nodes in $1 but $2.
others()
{
	local j

	for j in $1; do
		[ "$j" = "$2" ] || printf '%s ' "$j"
	done
}

# ---------------------------------------------------------------------------
# Servers

# Per server, named SET.K (a set of servers, node K): the host's pid of
# the `run` that carries it, and its endpoints as NIC:EP:TAG words.
declare -A server_pid=() server_eps=()

# An am_peers server of set $1 on node $2, serving on NIC $3 with $4
# endpoints (default 1); its pid in the guest in /tmp/am_peers.SET.pid.
server_start()
{
	local set=$1 k=$2 id=$3 eps=${4:-1} t file=$out/server.$1.$2 names

	# Emptied here, not by the redirection below, which the background
	# job may carry out after the first look: that would find the last
	# server's lines.
	: >"$file"
	# shellcheck disable=SC2016 # expanded on the node
	c run "$k" sh -c 'echo $$ >"/tmp/am_peers.$1.pid" &&
			  exec "$0" serve "$2" --endpoints "$3"' \
		"$am" "$set" "$id" "$eps" >"$file" 2>&1 &
	server_pid[$set.$k]=$!
	server_eps[$set.$k]=
	for ((t = 0; t < 600; t++)); do
		if [ "$(grep -c '^serving' "$file" 2>/dev/null)" = "$eps" ]; then
			server_eps[$set.$k]=$(awk '$1 == "serving" {
				sub("^0x", "", $4); printf "%s:%s ", $2, $4
			}' "$file")
			break
		fi
		kill -0 "${server_pid[$set.$k]}" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "${server_eps[$set.$k]}" ]
	check $? "$file" "node $k: am_peers serving on NIC $id:" \
		"$eps endpoint(s), from $(names_of "${server_eps[$set.$k]}" |
					  awk '{ print $1 }')"
}

# Stop the servers of set $1 on the nodes $2 (a list); each fails if it
# saw a duplicate or a corrupt payload.
servers_stop()
{
	local set=$1 k pids=()

	for k in $2; do
		# shellcheck disable=SC2016 # expanded on the node
		c run "$k" sh -c 'kill -TERM "$(cat "/tmp/am_peers.$0.pid")"' \
			"$set" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for k in $2; do
		wait "${server_pid[$set.$k]}"
		check $? "$out/server.$set.$k" \
			"node $k: its server took no request twice, none corrupt"
		grep '^served' "$out/server.$set.$k" | sed 's/^/# node '"$k"': /'
	done
}

# The endpoints of the servers of set $1 on the nodes $2 (a list).
endpoints_of()
{
	local j

	for j in $2; do
		printf '%s' "${server_eps[$1.$j]}"
	done
}

# The endpoint (NIC:EP) of node $1's server of set main, which has one.
ep_of()
{
	local w

	read -r w _ <<<"${server_eps[main.$1]}"
	echo "${w%:*}"
}

# NIC:EP of each NIC:EP:TAG word in $1.
names_of()
{
	local w

	for w in $1; do
		printf '%s ' "${w%:*}"
	done
}

# ---------------------------------------------------------------------------
# Clients

declare -A client_pid=()

# am_peers on node K sending from NIC $2 to the endpoints $3 (NIC:EP:TAG
# words), with the options that follow.  $1 is K, or K.NAME for a second
# client on the node; its output goes to $out/client.$1.
client_start()
{
	local k=$1 id=$2 to=$3

	shift 3
	c run "${k%%.*}" env VNET_PEERS="$to" "$am" send "$id" "$@" \
		>"$out/client.$k" 2>&1 &
	client_pid[$k]=$!
}

# Node $1's client ended well: no request answered or returned twice, and
# each server it asked took exactly what it answered (am_peers.c).
client_wait()
{
	local k=$1

	wait "${client_pid[$k]}"
	check $? "$out/client.$k" \
		"$2: node ${k%%.*}'s client saw nothing resolved twice"
}

# Sets the counts that node $1's client printed for endpoint $2 (NIC:EP);
# fails if it printed none.
result()
{
	local line

	sent=-1 replied=-1 unreachable=-1 returned=-1 unanswered=-1
	dupreplies=-1 slowest=-1 delivered=-1 duplicates=-1 corrupt=-1
	unreachable_after=-1
	line=$(grep "^peer $2 " "$out/client.$1") || return 1
	read -r _ _ _ sent _ replied _ unreachable _ returned _ unanswered \
		_ dupreplies _ slowest _ delivered _ duplicates _ corrupt \
		_ unreachable_after <<<"$line"
}

# Node $2's requests to the endpoints $3 (NIC:EP words) of node $4, in
# step $1: each answered once, and each endpoint took each of them exactly
# once, intact.
exactly_once()
{
	local step=$1 k=$2 eps=$3 j=$4 e total=0 ok=0 count=0

	for e in $eps; do
		count=$((count + 1))
		if ! { result "$k" "$e" &&
		       ((sent > 0 && replied == sent && unreachable == 0 &&
			 returned == 0 && unanswered == 0 &&
			 dupreplies == 0)) &&
		       [ "$delivered" = "$sent" ] && [ "$duplicates" = 0 ] &&
		       [ "$corrupt" = 0 ]; }; then
			ok=1
		fi
		((sent < 0)) || total=$((total + sent))
	done
	# No endpoint to ask is no proof.
	((count > 0)) || ok=1
	if ((count == 1)); then
		check $ok "$out/client.$k" "$step: node $k -> node $j:" \
			"$total requests, each answered and delivered once"
	else
		check $ok "$out/client.$k" "$step: node $k -> node $j:" \
			"$total requests to $count endpoints, each answered and" \
			"delivered once"
	fi
}

# Step $1: every node in $2 sends from its NIC to the servers of set $3 on
# every other node, with options $4...; then each ordered pair is checked.
all_pairs()
{
	local step=$1 nodes=$2 set=$3 k j
	shift 3

	for k in $nodes; do
		client_start "$k" "${nic[k]}" \
			"$(endpoints_of "$set" "$(others "$nodes" "$k")")" "$@"
	done
	for k in $nodes; do
		client_wait "$k" "$step"
	done
	for k in $nodes; do
		for j in $(others "$nodes" "$k"); do
			exactly_once "$step" "$k" \
				"$(names_of "${server_eps[$set.$j]}")" "$j"
		done
	done
}

# The sum of stat $2 (a file under the NIC's /sys/class/vnet/vnetID/, e.g.
# stats/retransmits) over the nodes $1.
stat_sum()
{
	local k total=0 v

	for k in $1; do
		v=$(c run "$k" cat "/sys/class/vnet/vnet${nic[k]}/$2") || v=0
		total=$((total + v))
	done
	echo "$total"
}

# Node $1's kernel log holds no warning.
# shellcheck disable=SC2317 # called through on_each
kernel_log_clean()
{
	local bad='BUG:|WARNING:|Oops|general protection|INFO: task .* blocked'

	bad+='|UBSAN|KASAN'
	c run "$1" sh -c "! dmesg | grep -E '$bad'"
}

# Node $1's NIC detached and vnet unloaded, nothing left behind.
# shellcheck disable=SC2317 # called through on_each
unload()
{
	c run "$1" sh -c "$vnetctl detach vnet${nic[$1]} && rmmod vnet &&
			  [ ! -e /sys/class/vnet ]"
}

# FN K for every node K in the list $1, all at once, FN being $2 and its
# output going to $out/FN.K; then a TAP line for each, described by the
# words after $2, in which NODE stands for the node's number.
on_each()
{
	local fn=$2 k pids=()

	for k in $1; do
		"$fn" "$k" >"$out/$fn.$k" 2>&1 &
		pids[k]=$!
	done
	shift 2
	for k in "${!pids[@]}"; do
		wait "${pids[k]}"
		check $? "$out/$fn.$k" "${*//NODE/$k}"
	done
}

# A TAP line for a test not run, described by $1, for the reason in the
# words after it.
skip()
{
	n=$((n + 1))
	echo "ok $n $1 # SKIP ${*:2}"
}
