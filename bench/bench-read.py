#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reads through the bus against the honest Docker baselines, with N other users' sandboxes
on the host (issue 13). Prints medians and ratios next to the targets; asserts nothing (a
benchmark, not a test).

For each N (--sizes, default 1,50,200) there are exactly N filler containers of another
uid on the host: created directly in dockerd with a real sandbox's labels (managed, name,
owner of uid FILLER_UID; no service label, so the daemon neither adopts nor removes
them), never started, removed at the end (also on Ctrl-C/SIGTERM).
Then, sides interleaved (the order alternating per round) after a warm-up round:

  inspect   InspectSandbox p50     vs GET /containers/{id}/json on one persistent connection
  verify    VerifySandbox p50      vs the same plain inspect
  ping      org.freedesktop.DBus.Peer.Ping to the service (answered by sd-bus itself): the
            bus's own round trip, so (ping + plain inspect) / plain inspect is the lowest
            ratio any read that asks Docker can have
  list      ListSandboxes p50      vs GET /containers/json?all=1&filters={"label":["xagent.managed=true"]}
  readers   16 concurrent InspectSandbox callers (one connection each) vs 16 raw inspectors:
            calls per second; and 16 callers pinging the service: with the machine's CPU
            the limit, a read costs at least a ping plus a plain inspect, so
            ping/s / (ping/s + raw/s) is the highest ratio readers that ask Docker can have
  cycle     Create, Verify, Stop, Delete through the bus vs create+start, inspect, stop,
            remove by id with the same body
  stale     the staleness window of reads from observations (DESIGN §20): bench-read
            bus-watch inspects back to back as the member while root changes the
            container's NanoCpus behind the service's back (POST /containers/{id}/update,
            --updates times, 0.3 s apart); per update, the time from Docker's answer to
            the first read that shows the new value (0 when a read showed it earlier)
  cold      the daemon stopped, then one InspectSandbox: activation → first reply
  memory    the daemon's VmRSS (of it RssAnon; the rest is shared-library pages) and
            thread count (/proc/PID/status) after --idle-wait s idle following a cold
            start, right after a large list, and --idle-wait s after that; beside it the
            floor: bench-read itself after only initialising libcurl, one Docker ping and
            one bus Hello (the same libraries)

The bus side is bench-read (bench/bench-read.c) run as the unprivileged member sbx-member
(real polkit checks; the first call of each run is untimed); the direct side is the same
program as root. Needs root, a Docker daemon and the test image (tests/setup-docker.sh).
--daemon-build points the stack at another build's daemon (e.g. main's, for a before and
after) while bench-read comes from --build.
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from urllib.parse import quote

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

import sandbox_helpers as h  # noqa: E402
from stack import MEMBER, Stack  # noqa: E402

FILLER_UID = 60999              # "another user": no account needed, no test user's
READERS = 16
TARGETS = {                     # ratio bus/direct (≤), except readers (≥) and absolute ones (issue 25)
    "inspect": 0.7, "verify": 0.7, "list": 1.0, "cycle": 1.05, "readers": 1.5,
    "cold_ms": 30.0, "idle_anon_mib": 3.0, "stale_p99_ms": 100.0,
}


class Bench:
    def __init__(self, a):
        self.a = a
        self.exe = os.path.join(os.path.abspath(a.build), "bench", "bench-read")
        self.stack = None
        self.bus = None
        self.prefix = f"bench-read-{os.getpid()}"
        self.name = self.prefix + "-mine"
        self.fillers = []           # container ids
        self.filler_labels = None
        self.cid = None
        self.dockerd = dockerd_pid()
        self.failures = 0

    # ---- running the sides ----------------------------------------------------------

    def side(self, mode, *args, as_member=None):
        argv = [self.exe, mode] + [str(x) for x in args]
        if as_member is None:
            as_member = mode.startswith(("bus-", "ping-")) or mode == "cold"
        for attempt in (1, 2):
            if as_member:
                r = self.stack.run_as(MEMBER, argv, timeout=600)
            else:
                r = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                                   env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.stack.address))
            if r.returncode == 0:
                return json.loads(r.stdout)
            # Said, and run once more: one failed call (e.g. polkitd slow under the load
            # of a shared machine) should not cost the whole run.
            print(f"bench-read {mode} failed (attempt {attempt}): {r.stderr.strip()}", file=sys.stderr)
            self.failures += 1
        raise RuntimeError(f"bench-read {mode} failed twice")

    def interleaved(self, sides, rounds):
        """sides: {label: (mode, args...)}; returns {label: [results of the timed rounds]}.
        Round 0 warms up; the order of the sides rotates from round to round."""
        out = {k: [] for k in sides}
        keys = list(sides)
        for i in range(rounds + 1):
            order = keys[i % len(keys):] + keys[:i % len(keys)]
            for k in order:
                cpu0 = cpu_ms(self.dockerd)
                res = self.side(*sides[k])
                cpu = cpu_ms(self.dockerd)
                if cpu0 is not None and cpu is not None:
                    res["dockerd_cpu_ms"] = cpu - cpu0
                if i > 0:
                    out[k].append(res)
        return out

    # ---- the host -------------------------------------------------------------------

    def make_mine(self):
        self.bus.create(MEMBER, self.name, h.spec()).result
        self.cid = self.bus.inspect(MEMBER, self.name).result[0]["container_id"]
        labels = h.docker_inspect(self.cid)["Config"]["Labels"]
        uid = str(h.uid_of(MEMBER))
        self.filler_labels = dict(labels)
        self.filler_labels["xagent.sandbox.owner"] = str(FILLER_UID)
        # Not this daemon's own (its reconciliation would remove a container it cannot
        # prove): like another instance's or xagent's, which it lists but leaves alone.
        self.filler_labels.pop("xagent.sandbox.service", None)
        self.name_label_qualified = labels["xagent.sandbox.name"].startswith(f"~{uid}:")

    def filler(self, i):
        plain = f"{self.prefix}-filler-{i}"
        qualified = f"~{FILLER_UID}:{plain}"
        labels = dict(self.filler_labels)
        labels["xagent.sandbox.name"] = qualified if self.name_label_qualified else plain
        status, data = h.docker("POST", "/containers/create?name="
                                + "xagent_sandbox_" + h.safe_name(qualified),
                                {"Image": self.a.image, "Cmd": ["/bin/sh"], "Labels": labels})
        if status != 201:
            raise RuntimeError(f"filler {i}: {status} {data}")
        return data["Id"]

    def set_fillers(self, n):
        todo = range(len(self.fillers), n)
        with concurrent.futures.ThreadPoolExecutor(4) as ex:
            for cid in ex.map(self.filler, todo):
                self.fillers.append(cid)
        while len(self.fillers) > n:
            h.docker_remove_container(self.fillers.pop())

    def cleanup(self):
        for cid in self.fillers:
            h.docker_remove_container(cid)
        self.fillers = []
        if self.stack is not None and self.stack.bus_proc is not None:
            for name in (self.name, self.prefix + "-cycle"):
                try:
                    self.bus.delete(MEMBER, name)
                except Exception:
                    pass
        # Whatever a killed side left: every container whose name label is ours.
        status, data = h.docker("GET", "/containers/json?all=1&filters="
                                + quote(json.dumps({"label": ["xagent.managed=true"]})))
        for c in data if status == 200 else []:
            if h.plain((c.get("Labels") or {}).get("xagent.sandbox.name", "")).startswith(self.prefix):
                h.docker_remove_container(c["Id"])

    # ---- the daemon -----------------------------------------------------------------

    def memory(self):
        pid = self.stack.daemon_pid()
        if pid is None:
            return None
        out = {}
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k == "VmRSS":
                    out["rss_mib"] = int(v.split()[0]) / 1024
                elif k == "RssAnon":
                    out["anon_mib"] = int(v.split()[0]) / 1024
                elif k == "Threads":
                    out["threads"] = int(v)
        return out

    def cold(self):
        samples = []
        for _ in range(self.a.cold):
            self.stack.stop_daemon()
            samples.append(self.side("cold", self.name)["ms"][0])
        return samples

    # ---- one size ---------------------------------------------------------------------

    def staleness(self):
        """[ms] per update: its answer → the first read showing it."""
        nano = h.docker_inspect(self.cid)["HostConfig"]["NanoCpus"]
        # alternating, the first unlike the value now (an update that changes nothing
        # would be matched to a later one's answer)
        pair = (15 * 10**8, 10**9) if nano != 15 * 10**8 else (10**9, 15 * 10**8)
        values = [pair[i % 2] for i in range(self.a.updates)]
        watch = self.stack.spawn_as(MEMBER, [self.exe, "bus-watch", self.name,
                                             str(int(self.a.updates * 400 + 2000))])
        done = []
        try:
            time.sleep(0.5)
            for v in values:
                t0 = time.monotonic() * 1e3
                status, body = h.docker("POST", f"/containers/{self.cid}/update", {"NanoCpus": v})
                assert status == 200, body
                done.append((t0, time.monotonic() * 1e3, v))
                time.sleep(0.3)
        finally:
            out, err = watch.communicate(timeout=120)
            h.docker("POST", f"/containers/{self.cid}/update", {"NanoCpus": nano})
        assert watch.returncode == 0, err
        changes = json.loads(out)["changes"]
        window = []
        # An update sent before the reader's first answer (it starts as another user,
        # which takes a while) measures that start, not the service: left out.
        done = [d for d in done if changes and d[0] > changes[0][0]]
        for i, (sent, answered, v) in enumerate(done):
            seen = [t for t, got in changes if got == v and t >= sent]
            if seen:
                window.append(max(0.0, seen[0] - answered))
                if os.environ.get("BENCH_STALE_DEBUG") and window[-1] > 10:
                    print(f"update {i}: {window[-1]:.1f} ms; changes near it: "
                          f"{[c for c in changes if sent - 50 <= c[0] <= seen[0] + 5]}", file=sys.stderr)
        return window, len(done) - len(window), len(values) - len(done)

    def run_size(self, n):
        a = self.a
        self.set_fillers(n)
        res = {"n": n}
        res["cold_ms"] = statistics.median(self.cold())
        time.sleep(a.idle_wait)
        res["mem_idle_fresh"] = self.memory()

        reads = self.interleaved({
            "direct": ("direct-inspect", self.cid, a.calls),
            "inspect": ("bus-inspect", self.name, a.calls),
            "verify": ("bus-verify", self.name, a.image, a.calls),
            "ping": ("bus-ping", a.calls),
        }, a.rounds)
        p50 = {k: statistics.median(x for r in v for x in r["ms"]) for k, v in reads.items()}
        res["inspect_direct_ms"], res["inspect_ms"], res["verify_ms"], res["ping_ms"] = \
            p50["direct"], p50["inspect"], p50["verify"], p50["ping"]
        cpu = {k: cpu_per_call(v) for k, v in reads.items()}
        res["dockerd_cpu_per_call"] = cpu

        lists = self.interleaved({
            "direct": ("direct-list", a.calls),
            "bus": ("bus-list", a.calls),
        }, a.rounds)
        res["list_direct_ms"] = statistics.median(x for r in lists["direct"] for x in r["ms"])
        res["list_ms"] = statistics.median(x for r in lists["bus"] for x in r["ms"])
        res["list_entries"] = {"direct": lists["direct"][-1]["entries"], "bus": lists["bus"][-1]["entries"]}
        res["mem_after_list"] = self.memory()

        if a.updates > 0:
            window, missed, early = self.staleness()
            window.sort()
            res["stale_p50_ms"] = statistics.median(window) if window else None
            res["stale_p99_ms"] = window[min(len(window) - 1, int(len(window) * 0.99))] if window else None
            res["stale_missed"] = missed
            res["stale_counted"] = len(window)
            res["stale_before_reader"] = early

        readers = self.interleaved({
            "direct": ("direct-readers", self.cid, READERS, a.readers_ms),
            "bus": ("bus-readers", self.name, READERS, a.readers_ms),
            "ping": ("ping-readers", READERS, a.readers_ms),
        }, a.rounds)
        res["readers_direct_per_s"] = statistics.median(r["calls"] / r["seconds"] for r in readers["direct"])
        res["readers_per_s"] = statistics.median(r["calls"] / r["seconds"] for r in readers["bus"])
        res["readers_ping_per_s"] = statistics.median(r["calls"] / r["seconds"] for r in readers["ping"])

        if a.cycles > 0:
            cycles = self.interleaved({
                "direct": ("direct-cycle", a.image, self.prefix + "-direct-cycle", a.cycles),
                "bus": ("bus-cycle", a.image, self.prefix + "-cycle", a.cycles),
            }, a.rounds)
            res["cycle_direct_ms"] = statistics.median(x for r in cycles["direct"] for x in r["ms"])
            res["cycle_ms"] = statistics.median(x for r in cycles["bus"] for x in r["ms"])

        # A large list last, then idle.
        self.side("bus-list", 3)
        res["mem_after_load"] = self.memory()
        time.sleep(a.idle_wait)
        res["mem_idle_after_load"] = self.memory()
        return res

    def run_stale_only(self):
        res = {"n": 1}
        window, missed, early = self.staleness()
        window.sort()
        res.update(stale_p50_ms=statistics.median(window), stale_max_ms=window[-1],
                   stale_p99_ms=window[min(len(window) - 1, int(len(window) * 0.99))],
                   stale_missed=missed, stale_counted=len(window), stale_before_reader=early)
        res["stale_over_10ms"] = [round(w, 1) for w in window if w > 10]
        print(json.dumps(res))
        return []

    def run_cold_only(self):
        for n in self.a.sizes:
            self.set_fillers(n)
            samples = self.cold()
            print(json.dumps({"n": n, "cold_ms": [round(x, 1) for x in samples],
                              "median": round(statistics.median(samples), 1)}), flush=True)
        return []

    def run(self):
        a = self.a
        self.stack = Stack(ROOT, a.daemon_build).start()
        self.bus = h.Sandboxd(self.stack)
        # READERS concurrent calls of one user: above the default per-user share.
        h.write_config(self.stack, {"max_operations_per_user": 64})
        results = []
        try:
            self.rss_floor = self.side("rss", as_member=False)
            self.make_mine()
            if a.stale_only:
                return self.run_stale_only()
            if a.cold_only:
                return self.run_cold_only()
            for n in a.sizes:
                t0 = time.monotonic()
                results.append(self.run_size(n))
                results[-1]["failed_runs"] = self.failures
                results[-1]["rss_floor"] = self.rss_floor
                print(f"N = {n}: {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
        finally:
            self.cleanup()
            self.stack.stop()
        return results


def dockerd_pid():
    """The dockerd process, when there is exactly one (for its CPU time); else None."""
    r = subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, text=True)
    pids = r.stdout.split()
    return int(pids[0]) if len(pids) == 1 else None


def cpu_ms(pid):
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def cpu_per_call(results):
    """dockerd's CPU time over all the timed rounds of a side, per call (the clock ticks
    are 10 ms; other users of the same dockerd count too)."""
    timed = [r for r in results if "dockerd_cpu_ms" in r]
    calls = sum(len(r["ms"]) + 1 for r in timed)      # the untimed first call included
    return sum(r["dockerd_cpu_ms"] for r in timed) / calls if timed else None


def fmt_mem(m):
    return f"{m['rss_mib']:5.1f} MiB (anonymous {m['anon_mib']:.1f}) {m['threads']:2d} thr" if m else "(no daemon)"


def report(results, a):
    print(f"\nbench-read: {a.rounds} interleaved rounds after a warm-up; {a.calls} calls per round "
          f"and side; p50 in ms; ratio = bus / direct (target)")
    for r in results:
        n = r["n"]
        print(f"\nN = {n} other users' sandboxes "
              f"(lists: bus {r['list_entries']['bus']} entries, raw {r['list_entries']['direct']})")
        rows = [("inspect", r["inspect_ms"], r["inspect_direct_ms"], "inspect"),
                ("verify", r["verify_ms"], r["inspect_direct_ms"], "verify"),
                ("list", r["list_ms"], r["list_direct_ms"], "list")]
        if "cycle_ms" in r:
            rows.append(("cycle", r["cycle_ms"], r["cycle_direct_ms"], "cycle"))
        print(f"  {'':<18} {'bus':>9} {'direct':>9} {'ratio':>7}  target")
        for label, b, d, t in rows:
            print(f"  {label:<18} {b:9.3f} {d:9.3f} {b / d:7.2f}  ≤ {TARGETS[t]}")
        rd = r["readers_per_s"] / r["readers_direct_per_s"]
        print(f"  {'readers (calls/s)':<18} {r['readers_per_s']:9.0f} {r['readers_direct_per_s']:9.0f} "
              f"{rd:7.2f}  ≥ {TARGETS['readers']}")
        # CPU-bound: a read through the bus costs at least a ping's CPU plus a plain inspect's.
        p, d = r["readers_ping_per_s"], r["readers_direct_per_s"]
        print(f"  {'pinging readers':<18} {p:9.0f}            floor of readers that ask Docker: "
              f"{p / (p + d):.2f}")
        print(f"  {'bus ping':<18} {r['ping_ms']:9.3f}            floor of a read that asks Docker: "
              f"{(r['ping_ms'] + r['inspect_direct_ms']) / r['inspect_direct_ms']:.2f}x")
        c = r["dockerd_cpu_per_call"]
        if c["direct"] is not None:
            print(f"  dockerd CPU ms/call (approx.): inspect {c['inspect']:.3f}, verify {c['verify']:.3f}, "
                  f"plain inspect {c['direct']:.3f}")
        if r.get("stale_p50_ms") is not None:
            print(f"  staleness window    p50 {r['stale_p50_ms']:.1f} ms, p99 {r['stale_p99_ms']:.1f} ms "
                  f"of {r['stale_counted']} updates (never shown: {r['stale_missed']}; before the reader's "
                  f"first answer, left out: {r['stale_before_reader']}; target p99 ≤ {TARGETS['stale_p99_ms']:.0f} ms)")
        print(f"  cold start          {r['cold_ms']:9.1f} ms (target ≤ {TARGETS['cold_ms']:.0f} ms)")
        print(f"  memory: idle after start {fmt_mem(r['mem_idle_fresh'])}; after lists "
              f"{fmt_mem(r['mem_after_load'])}; idle after that {fmt_mem(r['mem_idle_after_load'])} "
              f"(target: anonymous idle ≤ {TARGETS['idle_anon_mib']:.0f} MiB, back within 10 % after the lists)")
        fl = r["rss_floor"]
        print(f"  memory floor: a program that only initialised libcurl, pinged Docker and said Hello on "
              f"the bus (bench-read rss): {fl['rss_kb'] / 1024:.1f} MiB (anonymous {fl['anon_kb'] / 1024:.1f})")
    by_n = {r["n"]: r for r in results}
    if len(by_n) > 1:
        lo, hi = min(by_n), max(by_n)
        print(f"\nListSandboxes (the member's own sandbox only) at N = {hi} vs N = {lo}: "
              f"{by_n[hi]['list_ms'] / by_n[lo]['list_ms']:.2f}x (independent of others' sandboxes: ~1)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,50,200", help="N values, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=20, help="calls per round and side")
    ap.add_argument("--cycles", type=int, default=8, help="cycles per round and side (0: none; a start varies by ± 20 %%)")
    ap.add_argument("--cold", type=int, default=5, help="cold starts per N")
    ap.add_argument("--readers-ms", type=int, default=2000)
    ap.add_argument("--updates", type=int, default=50, help="updates behind the back for the staleness window (0: none)")
    ap.add_argument("--idle-wait", type=float, default=31)
    ap.add_argument("--image", default=h.TEST_IMAGE)
    ap.add_argument("--build", default=os.environ.get("SBX_BUILD_ROOT", os.path.join(ROOT, "build")),
                    help="where bench/bench-read is")
    ap.add_argument("--daemon-build", help="the build whose daemon runs (default: --build)")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--stale-only", action="store_true", help="only the staleness window, on the member's sandbox")
    ap.add_argument("--cold-only", action="store_true", help="only the cold starts (--cold of them) at each size")
    a = ap.parse_args()
    a.sizes = [int(x) for x in a.sizes.split(",")]
    a.daemon_build = os.path.abspath(a.daemon_build or a.build)

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # → the clean-up in run()
    # The stack's directory (bus socket, state, logs) away from /tmp/xagent-e2e-*, which
    # other runs on a shared machine may clean up.
    tempfile.tempdir = tempfile.mkdtemp(prefix="sbx-bench-read-", dir="/var/tmp")
    os.chmod(tempfile.tempdir, 0o755)
    try:
        results = Bench(a).run()
    finally:
        shutil.rmtree(tempfile.tempdir, ignore_errors=True)
    report(results, a)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
