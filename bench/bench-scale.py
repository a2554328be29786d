#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reads at scale against the raw Docker API, in one run (issue 36): on a private dockerd
(tests/fault's world: its own dockerd, the e2e stack with the real polkitd), the daemon
talking to that dockerd's socket directly (no relay), every figure's baseline measured
in the same run. Prints medians and ratios next to the targets; asserts nothing (a
benchmark, not a test).

Three hosts, one after the other:

  others  the member's one sandbox and 49 of another uid (FILLER_UID; created directly in
          dockerd with a real sandbox's labels, no service label: listed, never adopted)
  own     50 of the member's own sandboxes (one made through the service, 49 clones of it
          created through the raw API with their store rows: tests/fault/clones.py)
  500     the same, 500 of the member's own

and on each (sides interleaved, order rotating per round, after a warm-up round):

  cold list    the daemon stopped, then one ListSandboxes as the member on a connection
               made before: activation → the first answer (the member's own sandboxes);
               at 500 also as root (all 500), against the raw list of the 500
  list         ListSandboxes p50 as the member vs the raw filtered list of the member's
               containers (GET /containers/json?all=1&filters={"label":["xagent.managed=true",
               "xagent.sandbox.owner=UID"]}: what the daemon asks Docker) on one
               persistent connection
  inspect      InspectSandbox p50 as the member vs GET /containers/{id}/json
  memory       the daemon's RssAnon after --idle-wait s idle after a cold start

Needs root (the private dockerd, test users) and a build (bench/bench-read, the daemon).
About 5 minutes on 2 quiet cores.

    SBX_BUILD_ROOT=$PWD/build /usr/bin/python3 bench/bench-scale.py [--rounds 3 --calls 20]
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT_DIR, "tests", "fault"))

import fault as F  # noqa: E402
from clones import make_clones, remove_clones  # noqa: E402
from fault import MEMBER, ROOT  # noqa: E402

FILLER_UID = 60999
TARGETS = {"cold_500_ms": 150.0, "inspect_500": 0.7, "list_own": 1.0, "cold_own_ms": 30.0,
           "idle_anon_mib": 3.0}


class Bench:
    def __init__(self, a):
        self.a = a
        self.exe = os.path.join(F.BUILD_ROOT, "bench", "bench-read")
        self.f = None
        self.orig = "bench-scale"
        self.made = []
        self.fillers = []
        self.cid = None
        self.turn = 0
        self.builds = {"this": F.BUILD_ROOT}
        if a.baseline_build:
            self.builds["baseline"] = os.path.abspath(a.baseline_build)

    # ---- sides ------------------------------------------------------------------------

    def side(self, user, *args):
        argv = [self.exe] + [str(x) for x in args]
        if user == ROOT:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                               env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.f.stack.address,
                                        DOCKER_HOST=self.f.docker.host))
        else:
            r = self.f.stack.run_as(user, argv, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"bench-read {args[0]} as {user}: {r.stderr.strip()}")
        return json.loads(r.stdout)

    def cold_list(self, user):
        """ms from activation to the first ListSandboxes answer; its entries."""
        self.f.stop_daemon()
        res = self.side(user, "cold-list")
        return res["ms"][0], res["entries"]

    def judged(self, timeout):
        """Waits until the member's list judges every sandbox of theirs (the first
        reconciliation has looked at each)."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.f.call(MEMBER, "ListSandboxes")
            if r.ok and not [x for x in r.result[0] if x[3] == "unverified"]:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"still unverified after {timeout} s: {dict(r)}")
            time.sleep(0.5)

    def memory(self):
        pid = self.f.daemon_pid()
        with open(f"/proc/{pid}/status") as st:
            for line in st:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
        return None

    # ---- hosts ------------------------------------------------------------------------

    def use(self, build):
        """The daemon of build (a build directory) on the private dockerd's own socket:
        no relay in its way; an idle exit long enough for the run (so the per-call
        check for pending deadlines is there, as in a real daemon)."""
        argv = self.f.daemon_argv()
        argv[argv.index("--docker-host") + 1] = self.f.docker.host
        argv[argv.index("--idle-timeout") + 1] = "3600"
        argv[argv.index(self.f.stack.daemon_binary)] = os.path.join(build, "src", "daemon", "xagent-sandboxd")
        self.f.stop_daemon()
        self.f.stack.set_daemon_command(argv)

    def add_fillers(self, n):
        info = self.f.docker.ok("GET", f"/containers/{self.cid}/json")
        labels = dict(info["Config"]["Labels"])
        labels.pop("xagent.sandbox.service", None)
        labels["xagent.sandbox.owner"] = str(FILLER_UID)
        for i in range(n):
            q = f"~{FILLER_UID}:bench-scale-filler-{i}"
            lab = dict(labels, **{"xagent.sandbox.name": q})
            path = "/containers/create?name=xagent_sandbox_" + F.h.safe_name(q)
            body = {"Image": F.TEST_IMAGE, "Cmd": ["/bin/sh"], "Labels": lab}
            self.fillers.append(self.f.docker.ok("POST", path, body)["Id"])

    def grow_own(self, total):
        """The member's own sandboxes up to total (the daemon stopped: rows written)."""
        self.f.stop_daemon()
        have = 1 + len(self.made)
        self.made += make_clones(self.f, self.orig, MEMBER, total - have, first=len(self.made))

    def one_round(self, build, root_cold):
        """One daemon's figures: cold starts, then warm lists and inspects (sides
        interleaved, the order rotating with the call count)."""
        a, uid = self.a, F.uid_of(MEMBER)
        self.use(self.builds[build])
        out = {}
        out["cold_own_ms"], out["cold_own_entries"] = self.cold_list(MEMBER)
        if root_cold:
            out["cold_root_ms"], out["cold_root_entries"] = self.cold_list(ROOT)
        # Lists and reads once the first reconciliation has judged every container.
        self.judged(timeout=600)
        sides = {"raw_list_own": (ROOT, "direct-list-owner", uid, a.calls),
                 "list": (MEMBER, "bus-list", a.calls),
                 "raw_inspect": (ROOT, "direct-inspect", self.cid, a.calls),
                 "inspect": (MEMBER, "bus-inspect", self.orig, a.calls)}
        if root_cold:
            sides["raw_list_all"] = (ROOT, "direct-list", a.calls)
        keys = list(sides)
        for k in keys[self.turn % len(keys):] + keys[:self.turn % len(keys)]:
            out[k] = self.side(*sides[k])["ms"]
        self.turn += 1
        return out

    def idle_memory(self, build):
        """RssAnon --idle-wait s after the first reconciliation that followed a cold
        start's first list as the member (the workers retire after 10 s idle)."""
        self.use(self.builds[build])
        self.cold_list(MEMBER)
        self.judged(timeout=600)
        time.sleep(self.a.idle_wait)
        return self.memory()

    def measure(self, label, n_own, root_cold=False):
        res = {"host": label, "own": n_own, "others": len(self.fillers), "builds": {}}
        with open("/proc/loadavg") as la:
            res["load_before"] = la.read().split()[0]
        rounds = {b: [] for b in self.builds}
        names = list(self.builds)
        for i in range(self.a.rounds + 1):      # round 0 warms up
            for b in names[i % len(names):] + names[:i % len(names)]:
                r = self.one_round(b, root_cold)
                if i > 0:
                    rounds[b].append(r)
        for b, rs in rounds.items():
            fig = {"idle_anon_mib": self.idle_memory(b)}
            for k in rs[0]:
                vals = [x for r in rs for x in (r[k] if isinstance(r[k], list) else [r[k]])]
                fig[k] = vals if k.startswith("cold_") and k.endswith("_ms") else statistics.median(vals)
            res["builds"][b] = fig
        with open("/proc/loadavg") as la:
            res["load_after"] = la.read().split()[0]
        print(json.dumps(res), file=sys.stderr, flush=True)
        return res

    def run(self):
        self.f = F.Fault().start()
        try:
            self.use(self.builds["this"])
            self.f.activate()
            assert self.f.create(MEMBER, self.orig).result().ok
            (self.cid,) = self.f.containers_of(self.orig, MEMBER)
            out = []
            self.add_fillers(49)
            out.append(self.measure("others", 1))
            for c in self.fillers:
                self.f.docker.remove(c)
            self.fillers = []
            self.grow_own(50)
            out.append(self.measure("own", 50))
            self.grow_own(500)
            out.append(self.measure("500", 500, root_cold=True))
            return out
        finally:
            self.f.stop_daemon()
            remove_clones(self.f, self.made)
            problems = self.f.stop()
            if problems:
                print(f"left behind: {problems}", file=sys.stderr)


def report(results, a):
    print(f"\nbench-scale: {a.rounds} rounds after a warm-up round, builds alternating; per round and build "
          f"one cold start per caller and {a.calls} calls per side; p50 ms; ratio = bus / raw (target)")
    for r in results:
        print(f"\n{r['host']}: {r['own']} of the member's own sandboxes, {r['others']} of another uid's "
              f"(load average {r['load_before']} → {r['load_after']})")
        for b, x in r["builds"].items():
            lo = statistics.median(x["cold_own_ms"])
            print(f"  [{b}]")
            print(f"    ListSandboxes (member)  {x['list']:8.2f} vs raw filtered list {x['raw_list_own']:8.2f}: "
                  f"{x['list'] / x['raw_list_own']:.2f}x (≤ {TARGETS['list_own']})")
            print(f"    InspectSandbox          {x['inspect']:8.2f} vs raw inspect        {x['raw_inspect']:8.2f}: "
                  f"{x['inspect'] / x['raw_inspect']:.2f}x (≤ {TARGETS['inspect_500']})")
            print(f"    first ListSandboxes after activation (member, {x['cold_own_entries']} entries): {lo:.1f} ms "
                  f"(all: {', '.join(f'{v:.0f}' for v in x['cold_own_ms'])}; ≤ {TARGETS['cold_own_ms']:.0f} ms "
                  f"at 50 own) = {lo / x['raw_list_own']:.2f}x the raw filtered list")
            print(f"    idle RssAnon after a cold start: {x['idle_anon_mib']:.2f} MiB (≤ {TARGETS['idle_anon_mib']:.0f})")
            if "cold_root_ms" in x:
                c = statistics.median(x["cold_root_ms"])
                print(f"    first ListSandboxes after activation (root, {x['cold_root_entries']} entries): {c:.1f} ms "
                      f"(all: {', '.join(f'{v:.0f}' for v in x['cold_root_ms'])}; ≤ {TARGETS['cold_500_ms']:.0f} ms) "
                      f"= {c / x['raw_list_all']:.2f}x Docker's own list of the 500 ({x['raw_list_all']:.1f} ms)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20, help="calls per round and side")
    ap.add_argument("--baseline-build", help="another build (e.g. main's) whose daemon alternates with this one's")
    ap.add_argument("--idle-wait", type=float, default=15, help="s idle before RssAnon is read")
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args()
    F.e2e.ensure_users()
    results = Bench(a).run()
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(results, indent=1))
    report(results, a)


if __name__ == "__main__":
    sys.exit(main())
