#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The systemd unit: it parses, keeps its sandbox (every directive the
# daemon is known to run under) and systemd's own offline score of it
# stays at 4.0 or below.  Skipped without systemd-analyze.  TAP output.
UNIT="$(dirname "$0")/../vnet-mapd@.service"
n=0 fail=0

ok() {	# cond description
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}

if ! command -v systemd-analyze >/dev/null; then
	echo "1..0 # SKIP no systemd-analyze"
	exit 0
fi
echo "1..3"
missing=
for d in RestartPreventExitStatus=2 DevicePolicy=closed \
	 'DeviceAllow=/dev/vnet rw' ProtectKernelModules=yes \
	 ProtectKernelLogs=yes ProtectClock=yes RestrictNamespaces=yes \
	 RestrictSUIDSGID=yes SystemCallArchitectures=native UMask=0077 \
	 ReadWritePaths=/run/vnet NoNewPrivileges=yes; do
	grep -qx "$d" "$UNIT" || missing="$missing $d"
done
[ -z "$missing" ]; ok $? "the sandbox directives are there${missing:+ (missing:$missing)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$UNIT" "$tmp/vnet-mapd@.service"
out=$(cd "$tmp" && systemd-analyze security --offline=yes vnet-mapd@.service 2>&1)
echo "$out" | grep -q 'Overall exposure'; ok $? "systemd-analyze reads the unit"
echo "# exposure $(echo "$out" | sed -n 's/.*Overall exposure level[^:]*: \([0-9.]*\).*/\1/p')"
(cd "$tmp" && systemd-analyze security --offline=yes --threshold=40 \
	vnet-mapd@.service >/dev/null 2>&1); ok $? "exposure 4.0 or below"
exit $fail
