# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # the settings of run.sh, which sources this
#
# selftests/cluster/mapd_steps.sh - the steps of selftests/cluster/run.sh
# with vnet-mapd (run.sh says what each proves), and the helpers they
# share.  Sourced, after lib.sh.

# ---------------------------------------------------------------------------
# Nodes and daemons

# Per node, how many times its daemon was started: it names the logs.
gen=()

# Node $1: vnet loaded, eth0 attached without an id (attach picks a
# placeholder, which the mapper replaces).
node_up()
{
	c run "$1" sh -c "$(load_vnet) && $vnetctl attach eth0" \
		>"$out/up.$1" 2>&1
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
		check $? "$out/up.$k" "node $k: vnet loaded ($params)," \
			"eth0 attached without an id"
	done
}

# The name of node $1's current watch log, in $out.
watchlog()
{
	echo "watch.$1.${gen[$1]}.log"
}

# The host's wall clock in ms, the clock of $out/stamps.
now_ms()
{
	local us=${EPOCHREALTIME/./}

	echo $((us / 1000))
}

# mapd_state.py's $1 on the stamps of node $2's current watch log, with the
# options that follow; prints what it says.
stamped()
{
	local cmd=$1 k=$2

	shift 2
	python3 "$state_py" "$cmd" "$@" "$out/stamps" "$(watchlog "$k")" 2>&1
}

# Start vnet-mapd on node $1, once file $2 exists if given.
mapd_start()
{
	local k=$1 g=$((${gen[$1]:-0} + 1))

	gen[k]=$g
	c run "$k" "$node_sh" start "$out/mapd.$k.$g.log" \
		"$out/$(watchlog "$k")" \
		${2:+"$2"} -- --heartbeat-ms "$hb" --dead-ms "$dead" \
		>"$out/start.$k.$g" 2>&1
	check $? "$out/start.$k.$g" "node $k: vnet-mapd started" \
		"(--heartbeat-ms $hb --dead-ms $dead)"
}

# Every node in $1: what `vnetctl cluster --json` and `vnetctl route list`
# print, in $out/view.K.
views()
{
	local k pids=()

	for k in $1; do
		c run "$k" sh -c "$vnetctl cluster --json && $vnetctl route list" \
			>"$out/view.$k" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
}

# Wait up to $2 seconds until the mappers of the nodes $1 agree, as
# mapd_state.py agree says with the options that follow; sets term,
# version, nic (the nodes' ids) and boots (their boot ids), and leaves
# what the last try found in $out/agree.  The wait is not what is timed:
# each look costs the host a second, the stamps are to the 10 ms.
wait_agree()
{
	local set=$1 limit=$2 start=$SECONDS k line args=() b=() i=()

	shift 2
	for k in $set; do
		args+=("$(mac "$k")=$out/view.$k")
	done
	while :; do
		views "$set"
		if line=$(python3 "$state_py" agree "$@" "${args[@]}" 2>&1); then
			echo "$line" >"$out/agree"
			read -r _ _ _ term _ version _ k _ line <<<"$line"
			IFS=, read -r -a i <<<"$k"
			IFS=, read -r -a b <<<"$line"
			for k in $set; do
				nic[k]=${i[0]}
				boots[k]=${b[0]}
				i=("${i[@]:1}")
				b=("${b[@]:1}")
			done
			return 0
		fi
		echo "$line" >"$out/agree"
		((SECONDS - start < limit)) || return 1
		sleep 0.2
	done
}

# The options of mapd_state.py agree for the ids the nodes have now.
same_ids()
{
	local k

	for k in $all; do
		printf -- '--id %s=%d ' "$(mac "$k")" "${nic[k]}"
	done
}

# $1 is a number of milliseconds (or of seconds, with a point) within $2
# ms plus the slack for TCG.
within()
{
	local ms=$1

	[[ $ms == *.* ]] && ms=$(ms_of "$ms")
	[[ $ms =~ ^[0-9]+$ ]] && ((ms <= $2 + slack))
}

# Print $1 seconds as milliseconds.
ms_of()
{
	awk -v s="$1" 'BEGIN { printf "%d", s * 1000 }'
}

# Succeed if every argument is a whole number; else say which is not.
numbers()
{
	local v

	for v; do
		[[ $v =~ ^-?[0-9]+$ ]] || { echo "not a time: $v"; return 1; }
	done
}

# The measured times, repeated at the end.
figures=()

# How long each step took, as a TAP comment.
phase_start()
{
	phase_at=$SECONDS
}

phase()
{
	echo "# step $1: $((SECONDS - phase_at)) s"
	phase_at=$SECONDS
}

figure()
{
	figures+=("$*")
}

# ---------------------------------------------------------------------------
# 1. A cold start: every daemon started at one moment.

cold_start()
{
	local k go=$out/go at cv t_go first='' last='' conv=0 ms order=0
	local first_leader first_members

	# Each daemon waits for $go: however long the starts take, the
	# daemons start together, as far as TCG lets the guests run.
	for k in $all; do
		mapd_start "$k" "$go"
	done
	t_go=$(now_ms)
	touch "$go"
	wait_agree "$all" 30 --leader "$(mac 0)"
	check $? "$out/agree" "cold start: every mapper agrees: node 0 (the" \
		"lowest MAC) leads, table $term.$version, one id per node" \
		"(${nic[*]}), each NIC routing exactly the other three nodes"
	for k in $all; do
		at=$(stamped start "$k")
		cv=$(stamped converge "$k" --table "$term.$version")
		numbers "$at" "$cv" >"$out/times" || break
		[[ -n $first ]] && ((first <= at)) || first=$at
		[[ -n $last ]] && ((last >= at)) || last=$at
		((conv >= cv)) || conv=$cv
		((nic[k] == k + 1)) || order=1
	done
	ms=$((conv - last))
	echo "# cold start: the daemons started within $((last - first)) ms" \
	     "of each other, $((first - t_go)) to $((last - t_go)) ms after" \
	     "the go"
	numbers "$at" "$cv" && within "$ms" "$cold_bound"
	check $? "$out/times" "cold start: every node had table" \
		"$term.$version $ms ms after the last daemon started (bound" \
		"2H + H/4 = $cold_bound ms, + $slack)"
	figure "cold start: every node has the table $ms ms after the last" \
	       "daemon started ($((last - first)) ms after the first)"
	# Numbered in MAC order if every node said HELLO while node 0 was
	# still listening: within 2H of its start, and before any other
	# node's 2H ran out -- or that one led first, as its log says, and
	# numbered only the nodes it had heard.  A start stamp is taken
	# before the daemon runs; whether the HELLOs came in time shows in
	# the size of the leader's first table.
	first_leader=$(grep -l 'this node leads (term 1)' \
		"$out"/mapd.[0-9].1.log 2>/dev/null | head -n 1)
	first_leader=${first_leader#"$out"/mapd.}
	first_leader=${first_leader%%.*}
	first_members=$(sed -n 's/.*took table 1\.1: \([0-9]*\) members.*/\1/p' \
		"$out/mapd.0.1.log" 2>/dev/null | head -n 1)
	if ((last - first >= 2 * hb)); then
		skip "cold start: ids 1 to 4 in MAC order" "the daemons" \
		     "started $((last - first)) ms apart, more than 2H: TCG" \
		     "ran a guest late"
	elif [[ -n $first_leader && $first_leader != 0 ]]; then
		skip "cold start: ids 1 to 4 in MAC order" "node" \
		     "$first_leader led term 1 (its log): node 0's HELLO" \
		     "came after its 2H, TCG ran node 0 late"
	elif [[ -z $first_members ]]; then
		check 1 "$out/mapd.0.1.log" "cold start: ids 1 to 4 in MAC" \
		      "order (node 0's log names no table 1.1)"
	elif ((first_members < $(wc -w <<<"$all"))); then
		skip "cold start: ids 1 to 4 in MAC order" "node 0's first" \
		     "table had $first_members members: a HELLO came after" \
		     "its 2H, TCG ran that guest late"
	else
		check $order "" "cold start: ids 1 to 4 in MAC order"
	fi
}

# ---------------------------------------------------------------------------
# 3. Node $victim power-cut under traffic.

power_cut()
{
	local k j ms at since boot t0 t1

	boot=${boots[victim]}
	for k in $survivors; do
		client_start "$k" "${nic[k]}" \
			"$(endpoints_of main "$(others "$all" "$k")")" --seconds 7
	done
	sleep 3
	t0=$(now_ms)
	c kill "$victim"
	check $? "" "power cut: node $victim killed under traffic"
	t1=$(now_ms)
	# Requests sent to it now cannot be taken: each must come back, when
	# the route goes, not after the transport's retries.
	for k in $survivors; do
		client_start "$k.late" "${nic[k]}" "${server_eps[main.$victim]}" \
			--count 3 --persist
	done
	wait "${server_pid[main.$victim]}" 2>/dev/null
	for k in $survivors; do
		client_wait "$k" "power cut"
	done
	for k in $survivors; do
		for j in $(others "$survivors" "$k"); do
			exactly_once "power cut" "$k" "$(ep_of "$j")" "$j"
		done
		# A request node 3 had taken is no longer its sender's NIC's:
		# nothing can return it.  A client has 4 in flight.
		result "$k" "$(ep_of "$victim")"
		((sent > 0 && returned == 0 && dupreplies == 0 &&
		  unanswered <= 4 && replied + unreachable + unanswered == sent))
		check $? "$out/client.$k" "power cut: node $k -> node $victim:" \
			"$sent requests: $replied answered, $unreachable back" \
			"unreachable, $unanswered taken by node $victim and" \
			"lost with it (at most the 4 in flight)"
		if ((unreachable > 0)); then
			ms=$(ms_of "$unreachable_after")
			within "$ms" "$dead_bound"
			check $? "$out/client.$k" "power cut: node $k ->" \
				"node $victim: the last unreachable request" \
				"came back $ms ms after node $victim's last" \
				"reply (bound D + H/4 = $dead_bound ms, +" \
				"$slack; the transport alone: $giveup_ms ms)"
			figure "death: node $k's last request back unreachable" \
			       "$ms ms after node $victim's last reply"
		else
			ms="power cut: node $k -> node $victim: requests"
			skip "$ms back unreachable in time" "node $victim had" \
			     "taken all in flight: none came back"
		fi
	done
	for k in $survivors; do
		client_wait "$k.late" "after the kill"
		result "$k.late" "$(ep_of "$victim")" &&
			((sent == 3 && unreachable == 3)) &&
			within "$slowest" "$dead_bound"
		check $? "$out/client.$k.late" "after the kill: node $k ->" \
			"node $victim: $unreachable of $sent requests sent after" \
			"the kill back unreachable, the slowest in $slowest s" \
			"(bound D + H/4 = $dead_bound ms, + $slack; the transport" \
			"alone: $giveup_ms ms)"
		figure "death: node $k's requests sent after the kill back" \
		       "unreachable within $(ms_of "$slowest") ms"
	done

	wait_agree "$survivors" 30 --leader "$(mac 0)" --dead "$(mac "$victim")"
	check $? "$out/agree" "power cut: the survivors agree on table" \
		"$term.$version: node $victim DEAD, routed by none"
	for k in $survivors; do
		read -r at since <<<"$(stamped dead "$k" --mac "$(mac "$victim")" \
				       --boot "$boot")"
		numbers "$at" "$since" >"$out/times" && within "$since" "$dead_bound"
		check $? "$out/times" "power cut: node $k withdrew node" \
			"$victim's route $since ms after its last HELLO" \
			"($((at - t1)) to $((at - t0)) ms after the kill;" \
			"bound D + H/4 = $dead_bound ms, + $slack)"
		figure "death: node $k withdrew the route $since ms after" \
		       "the last HELLO, $((at - t1)) to $((at - t0)) ms" \
		       "after the kill"
	done

	# With the route gone, a request to it comes back at once.
	for k in $survivors; do
		client_start "$k" "${nic[k]}" "${server_eps[main.$victim]}" \
			--count 3 --persist
	done
	for k in $survivors; do
		client_wait "$k" "dead node"
		result "$k" "$(ep_of "$victim")"
		((sent == 3 && unreachable == 3)) && within "$slowest" 0
		check $? "$out/client.$k" "dead node: node $k -> node" \
			"$victim: $unreachable of $sent requests back" \
			"unreachable, the slowest in $slowest s (bound $slack ms)"
	done
}

# ---------------------------------------------------------------------------
# 4. Node $victim booted again: its old id, and traffic.

rejoin()
{
	local at cv ms ids id=${nic[victim]}

	ids=$(same_ids)
	c boot "$victim"
	check $? "" "reboot: node $victim up again"
	nodes_up "$victim"
	mapd_start "$victim"
	# shellcheck disable=SC2086 # options
	wait_agree "$all" 30 --leader "$(mac 0)" $ids
	check $? "$out/agree" "reboot: node $victim's mapper has its old id" \
		"$id back; every mapper agrees on table $term.$version"
	at=$(stamped start "$victim")
	cv=$(stamped converge "$victim" --table "$term.$version")
	ms=$((cv - at))
	numbers "$at" "$cv" >"$out/times" && within "$ms" "$join_bound"
	check $? "$out/times" "reboot: node $victim had table" \
		"$term.$version $ms ms after its daemon started (bound H +" \
		"H/4 = $join_bound ms, + $slack)"
	figure "rejoin: node $victim has the table $ms ms after its daemon" \
	       "started"
	server_start main "$victim" "${nic[victim]}"
	all_pairs "reboot" "$all" main --count 30
}

# ---------------------------------------------------------------------------
# 5. Node $1's link cut for cut_ms under traffic.

link_cut()
{
	local cut=$1 k j v before retrans deadline t0 slow ms list=""
	local -a acks

	before=$term.$version
	retrans=$(stat_sum "$all" stats/retransmits)
	for k in $all; do
		acks[k]=$(c run "$k" cat \
			"/sys/class/vnet/vnet${nic[k]}/stats/acks_received") ||
			acks[k]=0
	done
	for k in $all; do
		client_start "$k" "${nic[k]}" \
			"$(endpoints_of main "$(others "$all" "$k")")" --seconds 30
	done
	# Cut once every node's client is under way (its NIC has had an ACK
	# since): on a loaded host TCG may start a guest's client seconds
	# late, and a client that sends nothing across the cut waits nothing
	# out.  The clients run for 30 s from their own start: longer than
	# this wait may take, with these reads (a spool round trip each) and
	# the cut after it -- clients that had stopped before the cut made
	# the check below fail under load.
	deadline=$(($(now_ms) + 20000))
	for k in $all; do
		while v=$(c run "$k" cat \
			"/sys/class/vnet/vnet${nic[k]}/stats/acks_received") &&
			((v <= acks[k] && $(now_ms) < deadline)); do
			sleep 0.2
		done
	done
	sleep 1
	t0=$(now_ms)
	c link "$cut" down "$cut_ms"
	check $? "" "link cut: node $cut's switch port down for $cut_ms ms" \
		"(D/4), then up again"
	echo "# link cut: the request took $(($(now_ms) - t0)) ms"
	for k in $all; do
		client_wait "$k" "link cut"
	done
	for k in $all; do
		for j in $(others "$all" "$k"); do
			exactly_once "link cut" "$k" "$(ep_of "$j")" "$j"
		done
	done
	retrans=$(($(stat_sum "$all" stats/retransmits) - retrans))
	# Traffic to and from the node waited the cut out: a cut, not a
	# blink between two messages.  One pair that did is proof enough:
	# a guest that TCG did not run during the cut sent nothing to wait.
	slow=0
	for k in $all; do
		for j in $(others "$all" "$k"); do
			[ "$k" = "$cut" ] || [ "$j" = "$cut" ] || continue
			result "$k" "$(ep_of "$j")" || continue
			list+=" $k->$j ${slowest}s,"
			ms=$(ms_of "$slowest")
			((ms <= slow)) || slow=$ms
		done
	done
	((slow >= cut_ms / 2 && retrans > 0))
	check $? "" "link cut: requests to and from node $cut waited it" \
		"out (slowest:${list%,}); $retrans retransmissions"
	wait_agree "$all" 30 --leader "$(mac 0)" &&
		[ "$term.$version" = "$before" ]
	check $? "$out/agree" "link cut: every mapper agrees on table" \
		"$term.$version, the one before the cut: nobody was" \
		"declared dead"
}

# ---------------------------------------------------------------------------
# 6. The leader's daemon killed, and started again.

leader_change()
{
	local k at since cv ms bound old new ids t0 t1

	old=$(mac 0)
	new=$(mac 1)
	ids=$(same_ids)
	t0=$(now_ms)
	c run 0 "$node_sh" kill >"$out/kill.0" 2>&1
	check $? "$out/kill.0" "leader: node 0's daemon killed (SIGKILL)"
	t1=$(now_ms)
	wait_agree "1 2 3" 30 --leader "$new" --dead "$old"
	check $? "$out/agree" "leader: nodes 1 to 3 agree: node 1 leads," \
		"table $term.$version, node 0 DEAD"
	for k in 1 2 3; do
		bound=$elect_member_bound
		[ "$k" != 1 ] || bound=$elect_bound
		read -r at since <<<"$(stamped elected "$k" --old "$old" \
				       --new "$new")"
		numbers "$at" "$since" >"$out/times" && within "$since" "$bound"
		check $? "$out/times" "leader: node $k had node 1's table" \
			"$since ms after node 0's last HELLO ($((at - t1)) to" \
			"$((at - t0)) ms after the kill; bound $bound ms, +" \
			"$slack)"
		figure "election: node $k has the new leader's table $since" \
		       "ms after the old one's last HELLO, $((at - t1)) to" \
		       "$((at - t0)) ms after the kill"
	done

	# Nodes 1 to 3 talk while node 0's daemon comes back and leads
	# again: its first tables must not cost any of them a route.
	for k in 1 2 3; do
		client_start "$k" "${nic[k]}" \
			"$(endpoints_of main "$(others "1 2 3" "$k")")" --seconds 5
	done
	sleep 1
	mapd_start 0
	for k in 1 2 3; do
		client_wait "$k" "leader back"
	done
	for k in 1 2 3; do
		for j in $(others "1 2 3" "$k"); do
			exactly_once "leader back" "$k" "$(ep_of "$j")" "$j"
		done
	done
	# shellcheck disable=SC2086 # options
	wait_agree "$all" 30 --leader "$old" $ids
	check $? "$out/agree" "leader: node 0's daemon restarted: id" \
		"${nic[0]} kept, node 0 leads again, table $term.$version" \
		"everywhere"
	at=$(stamped start 0)
	cv=$(stamped converge 0 --table "$term.$version")
	ms=$((cv - at))
	numbers "$at" "$cv" >"$out/times" &&
		within "$ms" $((join_bound + tick))
	check $? "$out/times" "leader: node 0 led again with table" \
		"$term.$version $ms ms after its daemon started (bound H +" \
		"H/2 = $((join_bound + tick)) ms, + $slack)"
	figure "restarted leader: node 0 leads again $ms ms after its start"
	all_pairs "leader back" "$all" main --count 20
}

# ---------------------------------------------------------------------------
# 7. 32 endpoints on 8 frames per node, all talking, through 10% loss.

# Node $1's counters: faults evictions retransmits
# nacks_received_not_resident frames nr_endpoints.
counters()
{
	# shellcheck disable=SC2016 # expanded on the node
	c run "$1" sh -c 'cd "/sys/class/vnet/vnet$0" && cat faults evictions \
		stats/retransmits stats/nacks_received_not_resident frames \
		nr_endpoints | tr "\n" " "' "${nic[$1]}"
}

paging()
{
	local k j before loss=1 count=20 refused=0 want
	local -a c0 c1 frames=() eps_seen=() peak_pid=()

	before=$term.$version
	for k in $all; do
		c run "$k" sh -c 'modprobe sch_netem &&
			tc qdisc add dev eth0 root netem loss 10%' \
			>"$out/netem.$k" 2>&1 || loss=0
	done
	if ((loss)); then
		check 0 "" "paging: every node loses 10% of the frames it" \
			"sends (netem on eth0)"
	else
		skip "paging: 10% loss on every node" "no netem: $(cat \
			"$out"/netem.* | head -n 1)"
	fi
	for k in $all; do
		c0[k]=$(counters "$k")
	done
	for k in $all; do
		server_start page "$k" "${nic[k]}" "$paging_eps"
	done
	# Each client makes its 24 endpoints as it starts, which on a busy
	# host can take a while, and closes them when done, which on an idle
	# one can come soon: each node samples its own count until it has
	# seen every endpoint or 30 s have passed.
	want=$((paging_eps * 4))
	for k in $all; do
		# shellcheck disable=SC2016 # expanded on the node
		c run "$k" sh -c 'cd "/sys/class/vnet/vnet$0" || exit 1
			peak=0; t=$(($(date +%s) + 30))
			while [ "$peak" -lt "$1" ] && [ "$(date +%s)" -lt "$t" ]
			do
				n=$(cat nr_endpoints)
				[ "$n" -gt "$peak" ] && peak=$n
				sleep 0.02
			done
			echo "$(cat frames) $peak"' "${nic[k]}" "$want" \
			>"$out/peak.$k" 2>&1 &
		peak_pid[k]=$!
	done
	for k in $all; do
		client_start "$k" "${nic[k]}" \
			"$(endpoints_of page "$(others "$all" "$k")")" \
			--count "$count" --stall "$paging_stall"
	done
	for k in $all; do
		wait "${peak_pid[k]}"
		read -r "frames[k]" "eps_seen[k]" <"$out/peak.$k"
		[ "${frames[k]}" = 8 ] && [ "${eps_seen[k]}" = "$want" ]
		check $? "$out/peak.$k" "paging: node $k has ${eps_seen[k]}" \
			"endpoints on ${frames[k]} frames"
	done
	for k in $all; do
		client_wait "$k" "paging"
	done
	for k in $all; do
		for j in $(others "$all" "$k"); do
			exactly_once "paging" "$k" \
				"$(names_of "${server_eps[page.$j]}")" "$j"
		done
	done
	for k in $all; do
		c run "$k" tc qdisc del dev eth0 root >/dev/null 2>&1
		c1[k]=$(counters "$k")
		# shellcheck disable=SC2086 # the counters
		set -- ${c0[k]} ${c1[k]}
		(($7 > $1 && $8 > $2 && (!loss || $9 > $3)))
		check $? "" "paging: node $k faulted endpoints in $(($7 - $1))" \
			"times and evicted $(($8 - $2)); $(($9 - $3))" \
			"retransmissions"
		refused=$((refused + ${10} - $4))
	done
	# Paging across kernels: a message that arrived for an endpoint
	# that was not loaded was refused, and its sender waited.
	((refused > 0))
	check $? "" "paging: $refused messages refused by a node whose" \
		"endpoint was not loaded, and sent again"
	wait_agree "$all" 30 --leader "$(mac 0)" &&
		[ "$term.$version" = "$before" ]
	check $? "$out/agree" "paging: every mapper agrees on table" \
		"$term.$version, the one before the loss: nobody was" \
		"declared dead"
}

# After step 7, its servers stopped (servers_stop): no reply of theirs came
# back.  One refused for busy_timeout_ms would, and leave its request
# unanswered; am_peers says to whom and why.
replies_taken()
{
	local k

	for k in $2; do
		grep -q ' 0 replies returned$' "$out/server.$1.$k"
		check $? "$out/server.$1.$k" "paging: node $k: every reply" \
			"of its servers was taken"
	done
}
