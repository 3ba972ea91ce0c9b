#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""vnet-mapd itself: real daemons, each with fakevnet.so standing in for
its kernel, on a segment of Unix sockets, with a 200 ms heartbeat.  They
converge (state files agree, routes are the other nodes); SIGTERM says
LEAVE and removes the state file; SIGKILL is noticed within dead_ms; a
restarted daemon gets its id back; two --nic-id claims of one id are
refused on both, with the error in both logs.  TAP output."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DAEMON = os.path.join(HERE, '..', 'vnet-mapd')
SHIM = os.path.join(HERE, 'fakevnet.so')
HB, DEAD = 200, 1000


class Node:
    def __init__(self, seg, k, nic_id=None):
        self.seg, self.k = seg, k
        self.mac = '02:00:00:00:00:%02x' % k
        self.state = os.path.join(seg, 'state-%d.json' % k)
        self.logname = os.path.join(seg, 'log-%d' % k)
        self.nic_id = nic_id
        self.start()

    def start(self):
        env = dict(os.environ, LD_PRELOAD=SHIM, FAKEVNET_DIR=self.seg,
                   FAKEVNET_MAC=self.mac, FAKEVNET_IFNAME='eth%d' % self.k,
                   FAKEVNET_ID='1')
        args = [DAEMON, 'eth%d' % self.k, '--heartbeat-ms', str(HB),
                '--dead-ms', str(DEAD), '--state-file', self.state]
        if self.nic_id:
            args += ['--nic-id', str(self.nic_id)]
        with open(self.logname, 'a') as log:
            self.p = subprocess.Popen(args, env=env, stdout=log,
                                      stderr=subprocess.STDOUT)

    def up(self):
        return self.p.poll() is None

    def status(self):
        try:
            with open(self.state) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def routes(self):
        """The fake NIC's id and routes: (id, {peer: mac})."""
        path = os.path.join(self.seg, self.mac.replace(':', '') + '.routes')
        nic, routes = None, {}
        try:
            with open(path) as f:
                for line in f:
                    a, b = line.split()
                    if a == 'nic':
                        nic = int(b)
                    else:
                        routes[int(a)] = b
        except OSError:
            pass
        return nic, routes

    def log(self):
        with open(self.logname) as f:
            return f.read()


def converged(nodes):
    """None when every up node agrees and routes the others; else why."""
    up = [n for n in nodes if n.up()]
    st = {n.k: n.status() for n in up}
    if any(s is None for s in st.values()):
        return 'a state file is missing'
    first = st[up[0].k]
    for n in up:
        s = st[n.k]
        if (s['leader'], s['term'], s['version']) != \
           (first['leader'], first['term'], first['version']):
            return 'node %d disagrees' % n.k
    alive = {m['mac']: m['nic_id'] for m in first['members']
             if m['state'] == 'alive'}
    if set(alive) != {n.mac for n in up if not st[n.k]['refused']}:
        return 'alive members %s' % sorted(alive)
    if len(set(alive.values())) != len(alive):
        return 'ids %s are not unique' % sorted(alive.values())
    for n in up:
        nic, routes = n.routes()
        want = {i: m for m, i in alive.items() if m != n.mac}
        if routes != want:
            return 'node %d routes %s, not %s' % (n.k, routes, want)
        if not st[n.k]['refused'] and nic != alive[n.mac]:
            return 'node %d NIC has id %s' % (n.k, nic)
    return None


def wait_for(cond, within):
    end = time.monotonic() + within
    while True:
        why = cond()
        if why is None or time.monotonic() > end:
            return why
        time.sleep(0.02)


results = []


def check(name, ok, why=''):
    results.append(ok)
    print('%s %d %s%s' % ('ok' if ok else 'not ok', len(results), name,
                          '' if ok else ' # ' + why))
    sys.stdout.flush()


def main():
    print('TAP version 13')
    print('1..7')
    if not os.access(DAEMON, os.X_OK) or not os.access(SHIM, os.R_OK):
        print('# build ../vnet-mapd and fakevnet.so first')
        return 1
    seg = tempfile.mkdtemp(prefix='vnet-mapd-test.')
    nodes = [Node(seg, k) for k in range(1, 6)]
    try:
        t0 = time.monotonic()
        why = wait_for(lambda: converged(nodes), 5)
        check('five daemons converge', why is None, str(why))
        print('# converged after %.2f s' % (time.monotonic() - t0))
        ids = {n.k: n.status()['nic_id'] for n in nodes}

        gone = nodes[4]
        gone_id = ids[gone.k]
        t0 = time.monotonic()
        gone.p.send_signal(signal.SIGTERM)
        rc = gone.p.wait(2)
        why = wait_for(lambda: None if all(gone_id not in n.routes()[1]
                                           for n in nodes[:4])
                       else 'still routed', 2)
        t = time.monotonic() - t0
        print('# SIGTERM: exit %d, withdrawn everywhere after %.2f s' % (rc, t))
        check('SIGTERM: LEAVE withdraws the route before dead_ms',
              rc == 0 and why is None and t < DEAD / 1000 and
              not os.path.exists(gone.state) and 'stopped' in gone.log(),
              'rc %d, %s, %.2f s' % (rc, why, t))

        dead = nodes[3]
        dead_id = ids[dead.k]
        t0 = time.monotonic()
        dead.p.kill()
        dead.p.wait()
        why = wait_for(lambda: None if all(dead_id not in n.routes()[1]
                                           for n in nodes[:3])
                       else 'still routed', 3)
        t = time.monotonic() - t0
        print('# SIGKILL: withdrawn everywhere after %.2f s' % t)
        check('SIGKILL: dead within dead_ms and a tick, and said so',
              why is None and t < (DEAD + 2 * HB) / 1000 and
              all('NIC %d (%s) is dead' % (dead_id, dead.mac) in n.log()
                  for n in nodes[:3]), '%s, %.2f s' % (why, t))

        dead.start()
        why = wait_for(lambda: converged(nodes), 5)
        check('a restarted daemon gets its id back',
              why is None and dead.status()['nic_id'] == dead_id, str(why))

        states = [m['state'] for m in nodes[0].status()['members']]
        check('the state file says who is dead',
              sorted(states) == ['alive'] * 4 + ['dead'], str(states))

        a, b = Node(seg, 6, 42), Node(seg, 7, 42)
        nodes += [a, b]
        why = wait_for(lambda: converged(nodes), 5)
        err = 'error: --nic-id 42 is configured on'
        check('two claims of one id are refused on both',
              why is None and a.status()['refused'] and
              b.status()['refused'] and err in a.log() and err in b.log()
              and all(42 not in n.routes()[1] for n in nodes if n.up()),
              str(why))

        b.p.send_signal(signal.SIGTERM)
        b.p.wait(2)
        why = wait_for(lambda: converged(nodes) or
                       (None if a.status()['nic_id'] == 42 else 'no id'), 5)
        check('then the one left gets it', why is None, str(why))
    finally:
        for n in nodes:
            if n.up():
                n.p.kill()
                n.p.wait()
        if all(results):
            subprocess.call(['rm', '-rf', seg])
        else:
            print('# logs and state in %s' % seg)
    return 0 if all(results) and len(results) == 7 else 1


if __name__ == '__main__':
    sys.exit(main())
