# SPDX-License-Identifier: LGPL-2.1-or-later
"""A detached process's output through descriptors without the caller asking
(docs/python.md, xagent-sandboxctl(1)), as the member through the real bus:
`xagent-sandboxctl output --follow` and the Python module's Process.wait() follow a
process through StreamOutput — its session (the service's program with --attach,
following) is seen in the sandbox while they wait, no bytes have come yet — and end
with the process, with more bytes than one ReadOutput reply holds of a stream, equal
by sha256; Process.output() of an ended process whose kept output is beyond one
reply's 4 MiB returns it all in one call; a follow outrun by its process (four times
what is kept, written at once) hands out its end once."""

import hashlib
import json
import os
import re
import threading

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER
from test_python_client import pyrun  # noqa: F401  (the fixture)

# More than one ReadOutput reply holds of a stream (4 MiB); kept whole (max_process_output).
SIZE = 6 << 20
KEPT = 16 << 20
# The StreamOutput session of a follow: the service's program, cursor, follow 1.
SESSION = re.compile(r"xagent-sandbox-init --attach \S+ \d+ 1\b")


@pytest.fixture(scope="module")
def box(stack, docker_image):
    with h.daemon_config(stack, {"max_process_output": KEPT}):
        yield from h.running_sandbox(stack, "ostream")


def gated(tag):
    """A command that waits for its go file, then writes SIZE random bytes to stdout
    (and a copy to a file), a line to stderr, and exits 3: (command, go, copy)."""
    go, copy = f"/tmp/{tag}.go", f"/tmp/{tag}.bin"
    return (f"while [ ! -e {go} ]; do sleep 0.1; done; head -c {SIZE} /dev/urandom | tee {copy}; "
            f"echo done >&2; exit 3"), go, copy


def sandbox_sha(sandboxd, box, path):
    status, out, _, _ = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}",
                                      [box, ["sha256sum", path], {}]).result
    assert status == 0
    return bytes(out).decode().split()[0]


def follow_session_seen(box):
    h.wait_until(lambda: any(SESSION.search(line) for line in h.command_lines(box)), 60, step=0.3,
                 what="the StreamOutput session following the process")


def go(sandboxd, box, path):
    assert sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["touch", path], {}]).result[0] == 0


def test_ctl_output_follow_streams_and_ends_with_the_process(stack, sandboxd, box):
    cmd, go_file, copy = gated("ctl")
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    r = stack.run_as(MEMBER, [binary, "exec", "--detach", box, "--", "sh", "-c", cmd], timeout=60)
    assert r.returncode == 0, r.stderr
    exec_id = r.stdout.strip()
    out_dir = os.path.join(stack.tmp, h.unique("ctlout"))
    os.mkdir(out_dir)
    os.chown(out_dir, h.uid_of(MEMBER), h.gid_of(MEMBER))
    out_file, err_file = os.path.join(out_dir, "out"), os.path.join(out_dir, "err")
    p = stack.spawn_as(MEMBER, ["sh", "-c", f'exec "$0" output --follow {exec_id} >{out_file} 2>{err_file}',
                                binary])
    try:
        follow_session_seen(box)
        assert p.poll() is None
    finally:
        go(sandboxd, box, go_file)      # the process ends in any case
        try:
            p.wait(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
    assert p.returncode == 0, open(err_file).read()
    with open(out_file, "rb") as f:
        data = f.read()
    assert len(data) == SIZE and hashlib.sha256(data).hexdigest() == sandbox_sha(sandboxd, box, copy)
    assert open(err_file).read() == "done\n"
    # The read after the stream let the object go, as a polling follow's last read does.
    r = stack.run_as(MEMBER, [binary, "--json", "ps", box], timeout=60)
    assert exec_id not in [e["id"] for e in json.loads(r.stdout)]


def test_python_wait_streams_and_output_takes_more_than_a_reply(stack, sandboxd, box, pyrun):  # noqa: F811
    cmd, go_file, copy = gated("py")
    result = {}

    def run():
        result["out"] = pyrun(MEMBER, f"""
            import hashlib, time
            sb = Sandbox({box!r})
            p = sb.processes.start({cmd!r})
            r = p.wait(timeout=240)
            gone = None
            try:
                p.output()
            except NoSuchProcess:
                gone = True
            # An ended process whose kept output is beyond one reply: all of it at once.
            q = sb.processes.start(["sh", "-c", "head -c {SIZE} /dev/urandom | tee /tmp/pyq.bin; exit 5"])
            deadline = time.monotonic() + 120
            while not [x for x in sb.processes.list() if x.id == q.id and not x.running]:
                assert time.monotonic() < deadline
                time.sleep(0.2)
            o = q.output()
            out = r.stdout_bytes
            print(json.dumps(dict(code=r.exit_code, n=len(out), sha=hashlib.sha256(out).hexdigest(),
                                  err=r.stderr, gone=gone, qn=len(o.stdout),
                                  qsha=hashlib.sha256(o.stdout).hexdigest(), qrunning=o.running,
                                  qcode=o.exit_code)))
        """, timeout=400)

    t = threading.Thread(target=run)
    t.start()
    try:
        follow_session_seen(box)
    finally:
        go(sandboxd, box, go_file)      # the process ends in any case
        t.join(timeout=420)
    assert "out" in result, "the program failed (its error above)"
    out = result["out"]
    assert (out["code"], out["n"], out["err"], out["gone"]) == (3, SIZE, "done\n", True), out
    assert out["sha"] == sandbox_sha(sandboxd, box, copy)
    assert (out["qn"], out["qrunning"], out["qcode"]) == (SIZE, False, 5), out
    assert out["qsha"] == sandbox_sha(sandboxd, box, "/tmp/pyq.bin")


# Written far faster than a stream passes it on, four times what is kept: the stream
# skips what was overwritten, so the cursor counted from it is behind, and the reads
# after it must not hand the end out twice.
FLOOD = f"head -c {4 * KEPT} /dev/zero; echo END"


def flood_result(data):
    """Whether data is a flood's output with bytes dropped but none twice: zeros, then END once."""
    return data.endswith(b"END\n") and data.count(b"END") == 1 and not data[:-4].strip(b"\0") and \
        len(data) <= 4 * KEPT + 4


def test_a_follow_outrun_by_its_process_hands_out_the_end_once(stack, sandboxd, box, pyrun):  # noqa: F811
    cmd, go_file, _ = gated("flood")
    cmd = cmd.split("head -c")[0] + FLOOD
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    r = stack.run_as(MEMBER, [binary, "exec", "--detach", box, "--", "sh", "-c", cmd], timeout=60)
    assert r.returncode == 0, r.stderr
    exec_id = r.stdout.strip()
    out_dir = os.path.join(stack.tmp, h.unique("flood"))
    os.mkdir(out_dir)
    os.chown(out_dir, h.uid_of(MEMBER), h.gid_of(MEMBER))
    out_file = os.path.join(out_dir, "out")
    p = stack.spawn_as(MEMBER, ["sh", "-c", f'exec "$0" output --follow {exec_id} >{out_file}', binary])
    try:
        follow_session_seen(box)
    finally:
        go(sandboxd, box, go_file)
        try:
            p.wait(timeout=300)
        finally:
            if p.poll() is None:
                p.kill()
    assert p.returncode == 0, p.stderr.read()
    with open(out_file, "rb") as f:
        data = f.read()
    assert flood_result(data), (len(data), data[-16:], data.count(b"END"))

    out = pyrun(MEMBER, f"""
        sb = Sandbox({box!r})
        r = sb.processes.start({FLOOD!r}).wait(timeout=240)
        data = r.stdout_bytes
        print(json.dumps(dict(code=r.exit_code, n=len(data), tail=data[-16:].hex(), ends=data.count(b"END"),
                              zeros=not data[:-4].strip(b"\\0"))))
    """, timeout=300)
    assert (out["code"], out["ends"], out["zeros"]) == (0, 1, True), out
    assert bytes.fromhex(out["tail"]).endswith(b"END\n") and out["n"] <= 4 * KEPT + 4, out
