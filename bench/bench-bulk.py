#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Bulk bytes through descriptors (issue 36) against Docker's own stream, in one run:
ReadFile and WriteFile of 64 MiB with option fd, as the unprivileged member on one Gio
connection (ReadFile into a socket pair drained by a thread, WriteFile from a regular
file, as a client would), against Docker's archive API as root on its own socket
(GET /containers/{id}/archive of the same file, PUT of a tar of it from a regular
file, each body streamed and discarded or sent whole), and against Docker's own exec
stream (the path the service's rides on: an exec of `cat FILE` read to its end, one of
`sh -c 'cat > FILE'` fed the file on its stdin, created and started hijacked as root). Rounds interleave the
two sides (order alternating) after a warm-up round; prints MB/s medians, the ratios
(target >= 0.9x Docker's rate) and the daemon's CPU per byte during the service's side
(utime+stime of /proc/<daemon>/stat around each call; target <= 2 ns/byte). Then
(unless --no-output) a detached process's 48 MiB of output read to its end by the
Python module's Process.wait() (StreamOutput, descriptors) against ReadOutput replies
(what the module did before) and against Docker's exec stream of a `cat` of the same
bytes, on a daemon whose max_process_output keeps them all. Asserts nothing (a
benchmark, not a test).

Needs root, a Docker daemon and the test image (tests/setup-docker.sh); starts the
private bus + polkitd stack of tests/e2e/stack.py."""

import argparse
import os
import socket
import statistics
import sys
import tarfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER  # noqa: E402
from member_bench import member_sandbox, run_as_member  # noqa: E402
import sandbox_helpers as h  # noqa: E402

SIZE = 64 << 20
GUEST = "/tmp/bench/64m.bin"
# A detached process's output read to its end (the module's Process.wait()): 48 MiB,
# all kept (max_process_output at its limit, 64 MiB).
OUT_SIZE = 48 << 20
OUT_GUEST = "/tmp/bench/out.bin"
OUT_KEPT = 64 << 20

# One round of the service's side, as the member: each call's seconds and the daemon's
# CPU seconds meanwhile.
DRIVER = textwrap.dedent("""
    import json, os, socket, sys, threading, time
    from gi.repository import Gio, GLib

    name, src, pid, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    addr = Gio.dbus_address_get_for_bus_sync(Gio.BusType.SYSTEM, None)
    conn = Gio.DBusConnection.new_for_address_sync(
        addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    TICK = os.sysconf("SC_CLK_TCK")

    def cpu():
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def call(method, params, fd):
        fdlist = Gio.UnixFDList.new()
        fdlist.append(fd)
        conn.call_with_unix_fd_list_sync("org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                         "org.xagent.Sandbox1.Manager", method, params, None,
                                         Gio.DBusCallFlags.NONE, 600000, fdlist, None)
        for x in fdlist.steal_fds():
            os.close(x)

    def read_fd():
        ours, peer = socket.socketpair()
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)   # room for the service's writes
        got = [0]
        def drain():
            while True:
                b = ours.recv(1 << 20)
                if not b:
                    return
                got[0] += len(b)
        t = threading.Thread(target=drain)
        t.start()
        call("ReadFile", GLib.Variant("(ssa{sv})", (name, "/tmp/bench/64m.bin", {"fd": GLib.Variant("h", 0)})),
             peer.fileno())
        peer.close()
        t.join()
        ours.close()
        assert got[0] == size, got

    def write_fd():
        with open(src, "rb") as f:
            params = GLib.Variant.new_tuple(
                GLib.Variant("s", name), GLib.Variant("s", "/tmp/bench/w.bin"),
                GLib.Variant.new_from_bytes(GLib.VariantType("ay"), GLib.Bytes.new(b""), True),
                GLib.Variant("a{sv}", {"fd": GLib.Variant("h", 0)}))
            call("WriteFile", params, f.fileno())

    out = {}
    for k, fn in (("read", read_fd), ("write", write_fd)):
        c0, t0 = cpu(), time.perf_counter()
        fn()
        out[k] = [time.perf_counter() - t0, cpu() - c0]
    print(json.dumps(out))
""")


# One round of the output side, as the member with the Python module: a detached
# process that wrote OUT_SIZE bytes (and ended) read to its end by Process.wait()
# (StreamOutput) and another by ReadOutput replies, as the module did before (at most
# 4 MiB of a stream each); the seconds of each, the daemon's CPU seconds of the first.
OUTPUT_DRIVER = textwrap.dedent("""
    import json, os, sys, time
    from xagent_sandbox import Sandbox

    name, size, pid, guest = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    sb = Sandbox(name)
    TICK = os.sysconf("SC_CLK_TCK")

    def cpu():
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK

    def ended_process():
        p = sb.processes.start(["sh", "-c", f"head -c {size} /dev/urandom | tee {guest}"])
        deadline = time.monotonic() + 300
        while not [x for x in sb.processes.list() if x.id == p.id and not x.running]:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        return p

    def stream(p):
        assert len(p.wait().stdout_bytes) == size

    def replies(p):
        offset, n, running = 0, 0, True
        while running:
            out, _, offset, running = p._bus().call(p.path, "org.xagent.Sandbox1.Exec", "ReadOutput", "t",
                                                    [offset], timeout_s=60)
            n += len(out)
        assert n == size, n

    out = {}
    for k, fn in (("stream", stream), ("replies", replies)):
        p = ended_process()
        c0, t0 = cpu(), time.perf_counter()
        fn(p)
        out[k] = [time.perf_counter() - t0, cpu() - c0]
    print(json.dumps(out))
""")


def measure_output(stack, name, cid, rounds):
    """Process.wait() through StreamOutput vs ReadOutput replies vs Docker's exec
    stream of a cat of the same bytes, interleaved per round after a warm-up round:
    {side: [seconds]} and the daemon's CPU seconds during the StreamOutput reads."""
    bus = h.Sandboxd(stack)
    # The bulk part's files go first: they count in the sandbox's memory (512 MiB), whose
    # reclaim would slow the reads of the output's ring file.
    r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", "rm -f /tmp/bench/*"], {}])
    assert r.result[0] == 0, r.result
    lib = os.path.join(ROOT, "python", "xagent_sandbox")
    times = {"stream": [], "replies": [], "cat": []}
    cpu = 0.0
    with h.daemon_config(stack, {"max_process_output": OUT_KEPT}):
        bus.call(MEMBER, "GetPolicy").result          # activates the daemon on the config
        pid = stack.daemon_pid()
        for rnd in range(rounds + 1):
            for side in (["service", "docker"] if rnd % 2 == 0 else ["docker", "service"]):
                if side == "service":
                    got = run_as_member(stack, MEMBER, OUTPUT_DRIVER, [name, str(OUT_SIZE), str(pid), OUT_GUEST],
                                        copies=[lib])
                    if rnd:
                        times["stream"].append(got["stream"][0])
                        times["replies"].append(got["replies"][0])
                        cpu += got["stream"][1]
                elif rnd:
                    times["cat"].append(docker_exec_stream(cid, ["cat", OUT_GUEST], least=OUT_SIZE))
    return times, cpu


def read_to_end(s):
    """Reads the socket to its end, discarding; closes it; the bytes read."""
    n = 0
    while True:
        b = s.recv(1 << 20)
        if not b:
            break
        n += len(b)
    s.close()
    return n


def docker_stream(method, path, body_path=None):
    """One request on Docker's own socket; the response body read and discarded.
    Returns the seconds it took."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(h.DOCKER_SOCKET)
    t0 = time.perf_counter()
    head = f"{method} {path} HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n"
    if body_path:
        head += f"Content-Type: application/x-tar\r\nContent-Length: {os.path.getsize(body_path)}\r\n"
    s.sendall((head + "\r\n").encode())
    if body_path:
        with open(body_path, "rb") as f:
            s.sendfile(f)
    n = read_to_end(s)
    dt = time.perf_counter() - t0
    assert n > (SIZE if method == "GET" else 0), n
    return dt


def docker_exec_stream(cid, argv, body_path=None, least=SIZE):
    """Docker's own exec stream (what the service's path rides on): an exec of argv,
    started hijacked; body_path's bytes to its stdin (then its end), its output read
    and discarded. Returns the seconds from the exec's creation to the stream's end."""
    import json
    t0 = time.perf_counter()
    _, made = h.docker("POST", f"/containers/{cid}/exec", {"AttachStdout": True, "AttachStderr": True,
                                                        "AttachStdin": body_path is not None, "Cmd": argv,
                                                        "User": f"{h.uid_of(MEMBER)}:{h.gid_of(MEMBER)}"})
    s = socket.socket(socket.AF_UNIX)
    s.connect(h.DOCKER_SOCKET)
    body = json.dumps({"Detach": False, "Tty": False}).encode()
    s.sendall(f"POST /exec/{made['Id']}/start HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n"
              f"Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    if body_path:
        with open(body_path, "rb") as f:
            s.sendfile(f)
        s.shutdown(socket.SHUT_WR)
    n = read_to_end(s)
    dt = time.perf_counter() - t0
    assert n > (least if body_path is None else 0), n
    return dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (after one warm-up)")
    ap.add_argument("--no-output", action="store_true", help="without the detached output's part")
    a = ap.parse_args()

    with member_sandbox(ROOT, "bulk") as (stack, build, name):
        bus = h.Sandboxd(stack)
        r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}",
                     [name, ["sh", "-c", f"mkdir -p /tmp/bench && head -c {SIZE} /dev/urandom > {GUEST}"], {}])
        assert r.result[0] == 0, r.result
        work = os.path.join(stack.tmp, "bulk")
        os.makedirs(work, exist_ok=True)
        os.chmod(work, 0o755)
        src = os.path.join(work, "src.bin")
        with open(src, "wb") as f:
            f.write(os.urandom(SIZE))
        os.chmod(src, 0o644)
        tar = os.path.join(work, "src.tar")
        with tarfile.open(tar, "w") as t:
            t.add(src, arcname="p.bin")
        cid = h.container_name(name, MEMBER)
        pid = stack.daemon_pid()

        ours = {"read": [], "write": []}
        cpu = {"read": 0.0, "write": 0.0}
        docker = {"read": [], "write": []}
        execs = {"read": [], "write": []}
        for rnd in range(a.rounds + 1):
            sides = ["service", "docker"] if rnd % 2 == 0 else ["docker", "service"]
            for side in sides:
                if side == "service":
                    got = run_as_member(stack, MEMBER, DRIVER, [name, src, str(pid), str(SIZE)])
                    if rnd:
                        for k in ours:
                            ours[k].append(got[k][0])
                            cpu[k] += got[k][1]
                else:
                    g = docker_stream("GET", f"/containers/{cid}/archive?path={GUEST}")
                    p = docker_stream("PUT", f"/containers/{cid}/archive?path=/tmp/bench", tar)
                    eg = docker_exec_stream(cid, ["cat", GUEST])
                    ep = docker_exec_stream(cid, ["sh", "-c", "cat > /tmp/bench/x.bin"], src)
                    if rnd:
                        docker["read"].append(g)
                        docker["write"].append(p)
                        execs["read"].append(eg)
                        execs["write"].append(ep)

        mbs = lambda secs: SIZE / statistics.median(secs) / 1e6  # noqa: E731
        print(f"{'64 MiB, MB/s (median of ' + str(a.rounds) + ')':38} {'service':>8} {'docker':>8}  ratio  "
              f"daemon CPU (service)")
        for k, label, base in (("read", "ReadFile fd vs archive GET", docker),
                               ("read", "ReadFile fd vs exec cat stream", execs),
                               ("write", "WriteFile fd vs archive PUT", docker),
                               ("write", "WriteFile fd vs exec stdin stream", execs)):
            ratio = mbs(ours[k]) / mbs(base[k])
            ns = cpu[k] * 1e9 / (SIZE * a.rounds)
            print(f"{label:38} {mbs(ours[k]):8.1f} {mbs(base[k]):8.1f}  {ratio:.2f}x "
                  f"({'met' if ratio >= 0.9 else 'not met'} >= 0.9x)  {ns:.2f} ns/byte "
                  f"({'met' if ns <= 2 else 'not met'} <= 2)")

        if a.no_output:
            return
        times, out_cpu = measure_output(stack, name, cid, a.rounds)
        out_mbs = lambda secs: OUT_SIZE / statistics.median(secs) / 1e6  # noqa: E731
        print(f"\n{'48 MiB of output, MB/s (median of ' + str(a.rounds) + ')':38} {'module':>8} {'base':>8}  ratio")
        for label, base in (("wait() (StreamOutput) vs exec cat stream", "cat"),
                            ("wait() (StreamOutput) vs ReadOutput", "replies")):
            print(f"{label:42} {out_mbs(times['stream']):8.1f} {out_mbs(times[base]):8.1f}  "
                  f"{out_mbs(times['stream']) / out_mbs(times[base]):.2f}x")
        print(f"{'ReadOutput replies vs exec cat stream':42} {out_mbs(times['replies']):8.1f} "
              f"{out_mbs(times['cat']):8.1f}  {out_mbs(times['replies']) / out_mbs(times['cat']):.2f}x")
        print(f"daemon CPU during wait(): {out_cpu * 1e9 / (OUT_SIZE * a.rounds):.2f} ns/byte")


if __name__ == "__main__":
    main()
