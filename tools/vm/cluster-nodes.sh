# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # nodes, mem, ns, rundir: tools/vm/cluster's
#
# tools/vm/cluster-nodes.sh - the switch and the nodes of tools/vm/cluster,
# and the server that owns them.  Sourced by tools/vm/cluster.
#
# The switch is a bridge in a network namespace of the run's own, named
# vnetc-PID after the cluster's process, with a tap port per node.  QEMU
# must open its tap from inside that namespace (a tap is looked up by name
# in the opener's namespace), so it is started through nsenter, which
# changes only the network namespace and execs QEMU in the same process.
# No address is set and IPv6 is off on every port, so the host kernel
# itself sends nothing on them; nothing is routed or bridged out.
#
# The server is one background process: it boots, kills and reboots the
# nodes and cuts their links, on requests that clients leave as files in
# the run directory.  Being the parent of every QEMU it can reap them, and
# each QEMU is started with the parent-death signal set to SIGKILL, so no
# guest outlives the server, even one killed with SIGKILL.
#
# The run directory (rundir) holds, per node K:
#   nodeK/state          "booting G", "up G", "down" or "failed"; G counts
#                        the node's boots
#   nodeK/link           "up" or "down"
#   nodeK/G/             the share of boot G: what /init reads, the spool
#   nodeK/console.G.log  the serial console of boot G

# A guest that has not come up within this many seconds is killed and
# booted once more, as tools/vm/run does: under TCG on a loaded host a
# guest now and then hangs in early boot, calibrating its clocks.
boot_timeout=${VNET_VM_BOOT_TIMEOUT:-120}

# Per node, in the server: QEMU's pid, the boot count, the state, when the
# boot started, and whether it was already booted again for a hang.
qemu_pid=()
boot_gen=()
node_state=()
boot_start=()
boot_retried=()

# ---------------------------------------------------------------------------
# The switch

ipn()
{
	ip -n "$ns" "$@"
}

# Namespaces of clusters whose process is gone, killed before it could
# delete them.  Their guests went with the process (parent-death signal).
net_reap_stale()
{
	local name pid

	while read -r name _; do
		pid=${name#"$NS_PREFIX"}
		if [[ $name == "$NS_PREFIX"* ]] && is_positive "$pid" &&
		   ! kill -0 "$pid" 2>/dev/null; then
			ip netns del "$name" 2>/dev/null || true
		fi
	done < <(ip netns list 2>/dev/null)
}

net_up()
{
	local k

	ip netns add "$ns" || die "cannot create network namespace $ns"
	# Before the first interface, so that none ever has an IPv6 address.
	nsenter --net="/run/netns/$ns" sysctl -q -w \
		net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 ||
		die "cannot turn IPv6 off in $ns"
	ipn link add br0 type bridge mcast_snooping 0 ||
		die "cannot create the bridge in $ns"
	# Jumbo frames, so that 8 KiB medium messages fit (README.md).
	for ((k = 0; k < nodes; k++)); do
		ipn tuntap add dev "tap$k" mode tap ||
			die "cannot create tap$k in $ns"
		ipn link set "tap$k" mtu 9000 master br0 up ||
			die "cannot plug tap$k into the bridge in $ns"
		put "$rundir/node$k/link" up
	done
	ipn link set br0 mtu 9000 up || die "cannot bring the bridge up in $ns"
}

net_down()
{
	ip netns del "$ns" 2>/dev/null || true
}

# ---------------------------------------------------------------------------
# Nodes

# Before the server starts: the nodes it is about to boot are booting.
nodes_init()
{
	local k

	for ((k = 0; k < nodes; k++)); do
		mkdir -- "$rundir/node$k"
		put "$rundir/node$k/state" booting
	done
}

set_state()
{
	node_state[$1]=$2
	put "$rundir/node$1/state" "$2"
}

# Boot node $1, generation boot_gen[$1] + 1, in the background.
node_boot()
{
	local k=$1 gen share mac

	gen=$((${boot_gen[k]:-0} + 1))
	boot_gen[k]=$gen
	share=$rundir/node$k/$gen
	mac=$(mac_of "$k")
	mkdir -p -- "$share/spool"
	printf '%s\n' "$TREE" >"$share/tree"
	od -An -tx1 -N6 /dev/urandom | tr -d ' \n' >"$share/token"
	echo >>"$share/token"
	printf '%s\n' "$BASH" >"$share/bash"
	echo "$k" >"$share/node"
	echo "$nodes" >"$share/nodes"
	echo "$mac" >"$share/mac"

	vm_qemu "$mem" 1 "$share"
	qemu+=(
		-netdev "tap,id=net0,ifname=tap$k,script=no,downscript=no"
		-device "virtio-net-pci,netdev=net0,mac=$mac"
	)
	nsenter --net="/run/netns/$ns" -- setpriv --pdeathsig KILL -- \
		"${qemu[@]}" </dev/null >"$rundir/node$k/console.$gen.log" 2>&1 &
	qemu_pid[k]=$!
	boot_start[k]=$SECONDS
	set_state "$k" "booting $gen"
}

# Power-cut node $1: SIGKILL, as pulling the plug gives the guest no say.
node_kill()
{
	local k=$1

	if [[ -n ${qemu_pid[k]:-} ]]; then
		kill -KILL "${qemu_pid[k]}" 2>/dev/null || true
		wait "${qemu_pid[k]}" 2>/dev/null || true
		qemu_pid[k]=
	fi
}

# Print the last lines of node $1's console, for a node that failed.
node_console_tail()
{
	local log=$rundir/node$1/console.${boot_gen[$1]}.log

	echo "$PROG: node $1: last console lines:"
	sed -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1b[^[]//g' "$log" |
		tail -n 20
}

# Follow node $1 through booting, up and down.
node_tick()
{
	local k=$1 state=${node_state[$1]} gen=${boot_gen[$1]:-0} rc=0 share

	share=$rundir/node$k/$gen
	case $state in
	booting*)
		# Each boot has a share of its own: no "ready" is stale.
		if [[ -e $share/ready ]]; then
			set_state "$k" "up $gen"
		elif ! kill -0 "${qemu_pid[k]}" 2>/dev/null; then
			wait "${qemu_pid[k]}" || rc=$?
			qemu_pid[k]=
			echo "$PROG: node $k stopped while booting" \
			     "(QEMU exit status $rc)" >&2
			node_console_tail "$k" >&2
			set_state "$k" failed
		elif ((SECONDS - boot_start[k] >= boot_timeout)); then
			node_kill "$k"
			if ((${boot_retried[k]:-0})); then
				echo "$PROG: node $k did not boot within" \
				     "$boot_timeout s" >&2
				node_console_tail "$k" >&2
				set_state "$k" failed
			else
				echo "$PROG: node $k did not boot within" \
				     "$boot_timeout s; booting it again" >&2
				boot_retried[k]=1
				node_boot "$k"
			fi
		fi
		;;
	up*)
		if ! kill -0 "${qemu_pid[k]}" 2>/dev/null; then
			wait "${qemu_pid[k]}" || rc=$?
			qemu_pid[k]=
			echo "$PROG: node $k stopped (QEMU exit status $rc)" >&2
			set_state "$k" down
		fi
		;;
	esac
}

# ---------------------------------------------------------------------------
# Requests: "kill K", "boot K", "link K up|down", "link K down MS".  Sets
# reply: the status
# (0 done, 1 refused) and a message.  Runs in the server itself, never in
# a subshell, as the QEMUs it starts must be the server's children.

serve_request()
{
	local op k arg ms

	read -r op k arg ms _ <"$1" || true
	if [[ ! $k =~ ^(0|[1-9][0-9]*)$ ]] || ((k >= nodes)); then
		reply="1 no node '$k': the nodes are 0 to $((nodes - 1))"
		return
	fi
	reply=0
	case $op in
	kill)
		node_kill "$k"
		[[ ${node_state[k]} == failed ]] || set_state "$k" down
		;;
	boot)
		case ${node_state[k]} in
		booting*|up*)
			reply="1 node $k is running: kill it first"
			;;
		*)
			boot_retried[k]=0
			node_boot "$k"
			;;
		esac
		;;
	link)
		if [[ $arg != up && $arg != down ]]; then
			reply="1 link $k: up or down, not '$arg'"
		elif [[ -n $ms ]] && ! is_positive "$ms"; then
			reply="1 link $k down: not a number of milliseconds: $ms"
		elif ! ipn link set "tap$k" "$arg"; then
			reply="1 cannot set tap$k $arg"
		elif [[ -z $ms ]]; then
			put "$rundir/node$k/link" "$arg"
		else
			# Timed here rather than by the client, whose two
			# requests would each wait for a pass of this loop:
			# the cut lasts MS, give or take two runs of ip.
			put "$rundir/node$k/link" down
			nap "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
			if ipn link set "tap$k" up; then
				put "$rundir/node$k/link" up
			else
				reply="1 cannot set tap$k up"
			fi
		fi
		;;
	*)
		reply="1 unknown request '$op'"
		;;
	esac
}

# shellcheck disable=SC2317 # called from the EXIT trap
server_exit()
{
	local k pid orphan=0

	# The cluster's process was killed without a word: its SCRIPT and its
	# run directory are the server's to clean up.
	if ! kill -0 "$main_pid" 2>/dev/null; then
		orphan=1
		if [[ -r $rundir/script.pid ]] && read -r pid <"$rundir/script.pid"; then
			kill -TERM "$pid" 2>/dev/null || true
		fi
	fi
	for ((k = 0; k < nodes; k++)); do
		[[ -z ${qemu_pid[k]:-} ]] || kill -TERM "${qemu_pid[k]}" 2>/dev/null || true
	done
	for ((k = 0; k < nodes; k++)); do
		[[ -z ${qemu_pid[k]:-} ]] || wait "${qemu_pid[k]}" 2>/dev/null || true
	done
	net_down
	((!orphan)) || rm -rf -- "$rundir"
}

# The server, in a background process of its own; it ends with the
# cluster's process, whom it notices gone within a tick.  In a subshell $$
# is still that process's pid.
main_pid=$$
server_main()
{
	local k req reply

	trap - ERR
	trap server_exit EXIT
	trap 'exit 143' TERM HUP
	for ((k = 0; k < nodes; k++)); do
		node_boot "$k"
	done
	while kill -0 "$main_pid" 2>/dev/null; do
		for req in "$rundir"/req/*.req; do
			[[ -e $req ]] || continue
			serve_request "$req"
			put "${req%.req}.reply" "$reply"
			rm -f -- "$req"
		done
		for ((k = 0; k < nodes; k++)); do
			node_tick "$k"
		done
		nap 0.1
	done
}
