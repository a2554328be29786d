#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon's memory around detached processes (issue 22's target: 100 detached
processes each writing 10 MiB leave the daemon's RssAnon within 2 MiB of where it
started). As the unprivileged member sbx-member, with max_execs_per_user and max_execs
raised to --count: the daemon's RssAnon (/proc/PID/status) idle before, its highest
while --count processes each write --mib MiB to stdout (their output kept in the
sandbox, max_process_output per stream), once all ended, after each was read to its
end with ReadOutput (so their objects go; the finished ones beyond a caller's newest 16
went already), and --idle-wait s after that. Prints the
figures; asserts nothing (a benchmark, not a test).

Needs root, a Docker daemon and the test image (tests/setup-docker.sh); starts the
private bus + polkitd stack of tests/e2e/stack.py."""

import argparse
import os
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

import sandbox_helpers as h  # noqa: E402
from stack import MEMBER  # noqa: E402
from member_bench import member_sandbox  # noqa: E402

EXEC = "org.xagent.Sandbox1.Exec"
NULLS = ["</dev/null", ">/dev/null", ">/dev/null"]


def status_field(pid, key):
    """A number of /proc/PID/status (RssAnon: kB)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {key}")


def rss_anon_kib(pid):
    return status_field(pid, "RssAnon")


class Peak(threading.Thread):
    """The highest RssAnon of pid, sampled every 50 ms until stopped."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0, threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                self.peak = max(self.peak, rss_anon_kib(self.pid))
            except (OSError, RuntimeError):
                return
            time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--mib", type=int, default=10)
    ap.add_argument("--idle-wait", type=float, default=3)
    ap.add_argument("--running", type=float, default=0,
                    help="instead: --count processes that sleep, the daemon's RssAnon and threads measured after "
                         "RUNNING s while they run (past the workers' 10 s retirement), per running process")
    a = ap.parse_args()
    if a.running:
        return running_only(a)

    with member_sandbox(ROOT, "detached-memory") as (stack, build, name):
        bus = h.Sandboxd(stack)
        config = {"max_execs_per_user": a.count, "max_execs": a.count,
                  "max_operations_per_user": 128}
        with h.daemon_config(stack, config):
            policy = bus.call(MEMBER, "GetPolicy").result[0]
            pid = stack.daemon_pid()
            time.sleep(a.idle_wait)
            figures = {"before": rss_anon_kib(pid)}
            peak = Peak(pid)
            peak.start()
            t0 = time.monotonic()
            argv = ["head", "-c", str(a.mib << 20), "/dev/zero"]
            paths = [bus.call(MEMBER, "StartExec", "sasa{sv}hhh",
                              [name, argv, {"detach": ["b", True]}] + NULLS).result[0]
                     for _ in range(a.count)]
            started = time.monotonic() - t0
            while True:
                execs = bus.call(MEMBER, "ListExecs", "s", [name]).result[0]
                if not any(x[2] for x in execs if x[0] in paths):
                    break
                time.sleep(0.5)
            ended = time.monotonic() - t0
            figures["all ended"] = rss_anon_kib(pid)
            # The finished objects beyond the newest 16 of a caller went already (the
            # trim, docs/api.md); the rest are read to their end.
            listed = [x[0] for x in bus.call(MEMBER, "ListExecs", "s", [name]).result[0] if x[0] in paths]
            kept = 0
            for p in listed:
                offset, running = 0, True
                while running:
                    out, err, offset, running = bus.call(MEMBER, "ReadOutput", "t", [offset], path=p,
                                                         iface=EXEC).result
                    kept += len(out) + len(err)
            figures["all read (objects gone)"] = rss_anon_kib(pid)
            time.sleep(a.idle_wait)
            figures[f"{a.idle_wait:g} s later"] = rss_anon_kib(pid)
            peak.done.set()
            peak.join()
            figures["highest meanwhile"] = peak.peak
            left = [x for x in bus.call(MEMBER, "ListExecs", "s", [name]).result[0] if x[0] in paths]

    print(f"{a.count} detached processes, {a.mib} MiB of stdout each; max_process_output "
          f"{policy['max_process_output']} bytes per stream; started in {started:.1f} s, all ended "
          f"after {ended:.1f} s; {len(listed)} objects left once they ended (the trim), read to their end: "
          f"{kept / 2**20:.1f} MiB; {len(left)} objects left after")
    print("daemon RssAnon:")
    for k, v in figures.items():
        delta = v - figures["before"]
        print(f"  {k:28} {v:7d} kB  ({delta:+d} kB, {delta / 1024:+.2f} MiB)")


def threads(pid):
    return status_field(pid, "Threads")


def running_only(a):
    """The daemon's memory per running detached process (issue 36's target: 16 KiB):
    --count `sleep` processes, measured after --running s while all run."""
    with member_sandbox(ROOT, "detached-running") as (stack, build, name):
        bus = h.Sandboxd(stack)
        config = {"max_execs_per_user": a.count, "max_execs": a.count, "max_operations_per_user": 128}
        with h.daemon_config(stack, config):
            bus.call(MEMBER, "GetPolicy")
            pid = stack.daemon_pid()
            time.sleep(a.idle_wait)
            before, threads_before = rss_anon_kib(pid), threads(pid)
            argv = ["sleep", "3600"]      # killed below
            t0 = time.monotonic()
            paths = [bus.call(MEMBER, "StartExec", "sasa{sv}hhh",
                              [name, argv, {"detach": ["b", True]}] + NULLS).result[0]
                     for _ in range(a.count)]
            started = time.monotonic() - t0
            time.sleep(a.running)
            listed = [x for x in bus.call(MEMBER, "ListExecs", "s", [name]).result[0] if x[0] in paths]
            running = [x for x in listed if x[2]]
            ended = sorted({x[3] for x in listed if not x[2]})
            during, threads_during = rss_anon_kib(pid), threads(pid)
            for p in paths:
                bus.call(MEMBER, "Kill", "s", ["SIGKILL"], path=p, iface=EXEC)
    delta = during - before
    print(f"{a.count} detached `sleep` processes started in {started:.1f} s ({len(running)} running "
          f"{a.running:g} s later, {len(listed)} "
          f"listed, exit statuses of the others: {ended}): daemon RssAnon "
          f"{before} kB idle before, {during} kB while they run ({delta:+d} kB: {delta / a.count:.1f} kB per "
          f"running process); threads {threads_before} before, {threads_during} while they run")


if __name__ == "__main__":
    main()
