#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What the nodes' mappers say, for selftests/cluster/run.sh (on the host).

  mapd_state.py agree [--leader MAC] [--dead MAC]... [--id MAC=ID]...
                      MAC=VIEW...
      Each VIEW is what one node printed for `vnetctl cluster --json`
      followed by `vnetctl route list`; MAC is that node's address.  Exits
      0 and prints "leader MAC term T version V ids ID,... boots BOOT,..."
      (the nodes' ids and boot ids, in the order given) if every node's
      mapper agrees: one leader, one table (term and version), every node
      given ALIVE and every --dead MAC DEAD and nothing else, each node
      with a distinct id that its NIC has, and each NIC routing exactly
      the other ALIVE nodes' ids to their MACs.  Otherwise prints why and
      exits 1.

  mapd_state.py stamp DIR
      Until killed: every line the nodes' mapd_watch append to
      DIR/watch.*.log, as "HOST_MS FILE LINE" in DIR/stamps, HOST_MS being
      when this host saw it (its wall clock, ms; it looks every 10 ms).
      The nodes write over 9p, so a line is here within a few ms of its
      writing: one clock for every node, where each node's own wall clock
      is off by up to a second (a guest sets it from an RTC with whole
      seconds).

  mapd_state.py start STAMPS FILE
      HOST_MS of the first version FILE has from the daemon that wrote its
      last: when that daemon started.

  mapd_state.py converge --table T.V STAMPS FILE
      HOST_MS of FILE's first version in which the node has an id and
      table T.V.

  mapd_state.py dead --mac MAC --boot BOOT_ID STAMPS FILE
      "HOST_MS SINCE_MS" of FILE's first version in which the table has MAC
      (in its boot BOOT_ID) DEAD, which the daemon writes once it has
      withdrawn the route; SINCE_MS is how long before that the node
      heard MAC's last HELLO, by the daemon's clock.

  mapd_state.py elected --old MAC --new MAC STAMPS FILE
      "HOST_MS SINCE_MS" of FILE's first version in which the node leads,
      or has the new leader's table, in a term above the old leader's;
      SINCE_MS is how long before that the node heard the old leader's
      last HELLO.

FILE is a WATCHLOG's name in DIR.  A WATCHLOG is what mapd_watch printed:
one version of the state file a line.
"""
import argparse
import glob
import json
import os
import sys
import time


def fail(msg):
    print(msg)
    sys.exit(1)


def read_view(path):
    """The JSON of `vnetctl cluster --json` and the route list after it."""
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines:
        raise ValueError('empty')
    cluster = json.loads(lines[0])
    routes = set()
    for line in lines[1:]:
        words = line.split()
        if len(words) != 3 or words[0] == 'NIC':
            continue
        routes.add((words[0], int(words[1]), words[2]))
    ifs = cluster.get('interfaces', [])
    if len(ifs) != 1:
        raise ValueError('%d interfaces, not 1' % len(ifs))
    if ifs[0].get('stale'):
        raise ValueError('stale state file')
    return ifs[0]['state'], routes


def agree(args):
    nodes = [a.split('=', 1) for a in args.views]
    want_ids = dict(a.split('=', 1) for a in args.id)
    alive = {mac for mac, _ in nodes}
    dead = set(args.dead)
    errors = []
    tables = set()
    ids = []
    boots = []
    for mac, path in nodes:
        try:
            st, routes = read_view(path)
        except (OSError, ValueError, KeyError) as e:
            errors.append('%s: no state: %s' % (mac, e))
            continue
        tables.add((st['leader'], st['term'], st['version'],
                    st['table_leader']))
        boots.append(st['boot_id'])
        if st['mac'] != mac:
            errors.append('%s: state of %s' % (mac, st['mac']))
        members = {m['mac']: m for m in st['members']}
        states = {m: members[m]['state'] for m in members}
        want = {m: 'alive' for m in alive}
        want.update({m: 'dead' for m in dead})
        if states != want:
            errors.append('%s: members %s, not %s' % (mac, states, want))
            continue
        taken = [m['nic_id'] for m in members.values()]
        if None in taken or len(set(taken)) != len(taken):
            errors.append('%s: ids %s not distinct' % (mac, taken))
        own = members[mac]['nic_id']
        ids.append(str(own))
        if st['nic_id'] != own or st['nic'] != 'vnet%s' % own:
            errors.append('%s: NIC %s with id %s, table says %s' %
                          (mac, st['nic'], st['nic_id'], own))
        if mac in want_ids and str(own) != want_ids[mac]:
            errors.append('%s: id %s, not %s' % (mac, own, want_ids[mac]))
        expect = {('vnet%s' % own, members[m]['nic_id'], m)
                  for m in alive if m != mac}
        if routes != expect:
            errors.append('%s: routes %s, not %s' %
                          (mac, sorted(routes), sorted(expect)))
    if len(tables) > 1:
        errors.append('tables differ: %s' % sorted(tables))
    elif tables:
        leader, term, version, table_leader = tables.pop()
        if leader != table_leader:
            errors.append('leader %s, table from %s' % (leader, table_leader))
        if args.leader and leader != args.leader:
            errors.append('leader %s, not %s' % (leader, args.leader))
    if errors:
        fail('; '.join(errors))
    print('leader %s term %s version %s ids %s boots %s' %
          (leader, term, version, ','.join(ids), ','.join(boots)))


def stamp(args):
    """Follow DIR/watch.*.log into DIR/stamps until killed."""
    offsets, partial = {}, {}
    with open(os.path.join(args.dir, 'stamps'), 'a') as out:
        while True:
            for path in sorted(glob.glob(os.path.join(args.dir,
                                                      'watch.*.log'))):
                name = os.path.basename(path)
                with open(path, 'rb') as f:
                    f.seek(offsets.get(name, 0))
                    data = f.read()
                if not data:
                    continue
                now = int(time.time() * 1000)
                offsets[name] = offsets.get(name, 0) + len(data)
                lines = (partial.pop(name, b'') + data).split(b'\n')
                partial[name] = lines.pop()
                for line in lines:
                    out.write('%d %s %s\n' % (now, name, line.decode()))
                out.flush()
            time.sleep(0.01)


def versions(stamps, name):
    """(HOST_MS, state) of each version of watch log @name."""
    with open(stamps) as f:
        for line in f:
            words = line.split(' ', 2)
            if len(words) != 3 or words[1] != name:
                continue
            try:
                yield int(words[0]), json.loads(words[2])
            except ValueError:
                pass        # a node killed mid-line


def member(st, mac):
    for m in st['members']:
        if m['mac'] == mac:
            return m
    return None


def start(args):
    # The first version of the daemon that wrote the last: one killed
    # before it leaves its file, which the next one's watcher sees first.
    seen = list(versions(args.stamps, args.file))
    for at, st in seen:
        if seen and st['pid'] == seen[-1][1]['pid']:
            print(at)
            return
    fail('%s: no version' % args.file)


def converge(args):
    term, version = (int(x) for x in args.table.split('.'))
    for at, st in versions(args.stamps, args.file):
        if st['nic_id'] and (st['term'], st['version']) == (term, version):
            print(at)
            return
    fail('%s: never had table %s' % (args.file, args.table))


def since_heard(at, st, mac):
    m = member(st, mac)
    if not m or m['last_heartbeat_ms'] is None:
        fail('%s: last HELLO from %s no longer known' % (at, mac))
    print(at, m['last_heartbeat_ms'])


def dead(args):
    for at, st in versions(args.stamps, args.file):
        m = member(st, args.mac)
        if m and m['boot_id'] == args.boot and m['state'] == 'dead':
            since_heard(at, st, args.mac)
            return
    fail('%s: %s (boot %s) never dead' % (args.file, args.mac, args.boot))


def elected(args):
    old_term = 0
    for at, st in versions(args.stamps, args.file):
        if st['table_leader'] == args.old:
            old_term = max(old_term, st['term'])
        if old_term and st['term'] > old_term and \
                st['table_leader'] == args.new and st['leader'] == args.new:
            since_heard(at, st, args.old)
            return
    fail('%s: no table from %s after %s led' %
         (args.file, args.new, args.old))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('agree')
    a.add_argument('--leader')
    a.add_argument('--dead', action='append', default=[])
    a.add_argument('--id', action='append', default=[])
    a.add_argument('views', nargs='+')
    sub.add_parser('stamp').add_argument('dir')
    b = sub.add_parser('start')
    c = sub.add_parser('converge')
    c.add_argument('--table', required=True)
    d = sub.add_parser('dead')
    d.add_argument('--mac', required=True)
    d.add_argument('--boot', required=True)
    e = sub.add_parser('elected')
    e.add_argument('--old', required=True)
    e.add_argument('--new', required=True)
    for q in (b, c, d, e):
        q.add_argument('stamps')
        q.add_argument('file')
    args = p.parse_args()
    {'agree': agree, 'stamp': stamp, 'start': start, 'converge': converge,
     'dead': dead, 'elected': elected}[args.cmd](args)


if __name__ == '__main__':
    main()
