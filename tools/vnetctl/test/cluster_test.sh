#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vnetctl cluster against state files written here the way vnet-mapd
# writes them: a live daemon's, one whose daemon is gone, one that is not
# a state file.  TAP on stdout.

# The checks are strings eval'd later (single-quoted, using rc).
# shellcheck disable=SC2016,SC2034

set -u
here=$(cd "$(dirname "$0")" && pwd)
vnetctl=$here/../vnetctl
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
n=0
failed=0

check() {
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		failed=1
	fi
}

now_ms=$(($(date +%s%N) / 1000000))
# A process that is surely gone: one we started and reaped.
sh -c 'exit 0' &
gone=$!
wait $gone

state() {	# ifname pid written_at_ms is_leader
	cat <<JSON
{"ifname":"$1","nic":"vnet2","mac":"02:00:00:00:00:02","nic_id":2,
 "boot_id":"0123456789abcdef","pid":$2,"written_at_ms":$3,
 "heartbeat_ms":500,"dead_ms":2000,"leader":"02:00:00:00:00:01",
 "is_leader":$4,"term":3,"version":7,"table_leader":"02:00:00:00:00:01",
 "refused":false,
 "members":[{"nic_id":1,"mac":"02:00:00:00:00:01","boot_id":"aa","state":"alive",
   "self":false,"leader":true,"last_heartbeat_ms":120},
  {"nic_id":2,"mac":"02:00:00:00:00:02","boot_id":"bb","state":"alive",
   "self":true,"leader":false,"last_heartbeat_ms":null},
  {"nic_id":3,"mac":"02:00:00:00:00:03","boot_id":"cc","state":"dead",
   "self":false,"leader":false,"last_heartbeat_ms":4100}],
 "stats":{"rx":10}}
JSON
}

echo "TAP version 13"
echo "1..11"

"$vnetctl" cluster --state-dir "$dir" > "$dir/out" 2>&1
rc=$?
check "no state file: an error that says what to start" \
	'[ $rc -eq 1 ] && grep -q "is vnet-mapd running" "$dir/out"'

state eth1 $$ "$now_ms" false > "$dir/mapd-eth1.json"
"$vnetctl" cluster --state-dir "$dir" > "$dir/out" 2>&1
rc=$?
check "a live daemon's view: exit 0" '[ $rc -eq 0 ]'
check "leader, table and members shown" \
	'grep -q "leader 02:00:00:00:00:01; table 3.7" "$dir/out" &&
	 grep -Eq "^ +3 +02:00:00:00:00:03 +dead +4.1 s" "$dir/out" &&
	 grep -Eq "^ +2 +02:00:00:00:00:02 +alive +- +bb +self" "$dir/out" &&
	 ! grep -q STALE "$dir/out"'

state eth2 $gone "$now_ms" false > "$dir/mapd-eth2.json"
state eth3 $$ $((now_ms - 60000)) true > "$dir/mapd-eth3.json"
"$vnetctl" cluster --state-dir "$dir" eth2 eth3 > "$dir/out" 2>&1
check "a file whose daemon is gone is stale" \
	'grep -q "STALE: its daemon (pid $gone) is not running" "$dir/out"'
check "a file not written for a minute is stale" \
	'grep -q "STALE: last written 6[0-9].[0-9] s ago" "$dir/out" &&
	 grep -q "this node leads" "$dir/out"'

"$vnetctl" cluster --state-dir "$dir" --json > "$dir/json" 2>&1
check "--json is JSON, every interface, stale marked" \
	'python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
st = {i[\"state\"][\"ifname\"]: i[\"stale\"] for i in d[\"interfaces\"]}
assert st == {\"eth1\": False, \"eth2\": True, \"eth3\": True}, st
assert d[\"interfaces\"][0][\"state\"][\"members\"][2][\"state\"] == \"dead\"
" "$dir/json"'

printf '{"ifname": "eth4", "members": [' > "$dir/mapd-eth4.json"
"$vnetctl" cluster --state-dir "$dir" eth4 > "$dir/out" 2>&1
rc=$?
check "a file that is not JSON is refused, exit 1" \
	'[ $rc -eq 1 ] && grep -q "not a vnet-mapd state file" "$dir/out"'

"$vnetctl" cluster --state-dir "$dir" ../etc > "$dir/out" 2>&1
rc=$?
check "an interface name with a slash is a usage error" '[ $rc -eq 2 ]'

# What a state file names reaches the terminal without control characters.
state eth5 $$ "$now_ms" false |
	sed 's/"leader":"02:00:00:00:00:01"/"leader":"\\u001b]0;pwned\\u0007x"/' \
	> "$dir/mapd-eth5.json"
"$vnetctl" cluster --state-dir "$dir" eth5 > "$dir/out" 2>&1
rc=$?
check "control characters in a state file are not printed" \
	'[ $rc -eq 0 ] && grep -q "leader ?]0;pwned?x" "$dir/out" &&
	 ! grep -q "$(printf "\033")" "$dir/out"'

# A pid no process can have is not looked up (nor cast into one).
state eth6 1e12 "$now_ms" false > "$dir/mapd-eth6.json"
"$vnetctl" cluster --state-dir "$dir" eth6 > "$dir/out" 2>&1
rc=$?
check "an impossible pid is not taken for a live or dead daemon" \
	'[ $rc -eq 0 ] && ! grep -q STALE "$dir/out"'

# A file that is refused says why, not a stale errno.
truncate -s 5M "$dir/mapd-eth7.json"
"$vnetctl" cluster --state-dir "$dir" eth7 > "$dir/out" 2>&1
rc=$?
check "a state file too large to read says so" \
	'[ $rc -eq 1 ] && grep -q "mapd-eth7.json: File too large" "$dir/out"'

exit $failed
