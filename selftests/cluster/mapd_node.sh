#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run on a node by selftests/cluster/run.sh: vnet-mapd on eth0, with
# mapd_watch beside it recording every version of its state file.
#
#   mapd_node.sh start LOG WATCHLOG [GO] -- VNET_MAPD_OPTIONS...
#       Starts mapd_watch (output appended to WATCHLOG), then vnet-mapd,
#       its stderr appended to LOG with each line stamped with the node's
#       wall clock (seconds); both in the background.  Through a pipe, not
#       a process substitution: the nodes' /dev has no /dev/fd.  With GO,
#       returns once the daemon is waiting for it.  With GO, the daemon
#       starts only once the file GO exists, so that the host can start
#       every node's daemon at one moment: a cold start.
#   mapd_node.sh stop
#       SIGTERM to the daemon (it says LEAVE) and the watcher; fails unless
#       the daemon stops cleanly within 5 s.
#   mapd_node.sh kill
#       SIGKILL to the daemon: it dies without a word; the watcher stays.

set -u

here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../.." && pwd)
mapd=$tree/tools/vnet-mapd/vnet-mapd
watch=$here/mapd_watch
run=/run/vnet-test
state=/run/vnet/mapd-eth0.json

# Sleep $1 seconds without a fork: a read that times out on a FIFO that
# nobody writes.  A node under TCG forks slowly, and the GO wait polls.
nap()
{
	read -r -t "$1" -u "$nap_fd" _ || true
}

start()
{
	local log=$1 watchlog=$2 go=

	shift 2
	if [ "$1" != -- ]; then
		go=$1
		shift
	fi
	shift
	mkdir -p "$run" || exit 1
	[ -p "$run/nap" ] || mkfifo "$run/nap" || exit 1
	exec {nap_fd}<>"$run/nap"
	rm -f "$run/waiting"
	# Its pages in memory: under TCG a first exec takes half a second,
	# which would spread a cold start's daemons over that much.
	"$mapd" --help >/dev/null

	setsid "$watch" "$state" >>"$watchlog" 2>&1 </dev/null &
	echo $! >"$run/watch.pid"

	# shellcheck disable=SC2016 # expanded by the daemon's shell
	setsid bash -c '
		exec {nap_fd}<>"$1/nap"
		: >"$1/waiting"
		while [ -n "$2" ] && [ ! -e "$2" ]; do
			read -r -t 0.01 -u "$nap_fd" _
		done
		printf "%s mapd_node.sh: starting vnet-mapd\n" \
			"$EPOCHREALTIME" >>"$3"
		{
			"$4" eth0 "${@:5}" 2>&1 >/dev/null &
			echo $! >"$1/mapd.pid"
			wait
		} | while IFS= read -r line; do
			printf "%s %s\n" "$EPOCHREALTIME" "$line"
		done >>"$3"' \
		mapd "$run" "$go" "$log" "$mapd" "$@" </dev/null >/dev/null 2>&1 &
	while [ ! -e "$run/waiting" ]; do
		nap 0.01
	done
}

# Send signal $1 to the process whose pid is in $run/$2.pid.
signal()
{
	local pid

	read -r pid <"$run/$2.pid" || return 1
	kill "-$1" "$pid"
}

# Process $1 has exited: no such process, or a zombie that the guest's
# /init, which the orphaned daemon was reparented to, has not reaped yet.
gone()
{
	local stat

	read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
	stat=${stat##*) }
	[ "${stat%% *}" = Z ]
}

stop()
{
	local pid t

	exec {nap_fd}<>"$run/nap"
	read -r pid <"$run/mapd.pid" || exit 1
	signal TERM watch
	kill -TERM "$pid" || exit 1
	for ((t = 0; t < 50; t++)); do
		gone "$pid" && exit 0
		nap 0.1
	done
	echo "vnet-mapd (pid $pid) still running 5 s after SIGTERM" >&2
	exit 1
}

case ${1-} in
start)
	shift
	start "$@"
	;;
stop)
	stop
	;;
kill)
	signal KILL mapd
	;;
*)
	echo "usage: $0 start LOG WATCHLOG [GO] -- OPTIONS... | stop | kill" >&2
	exit 2
	;;
esac
