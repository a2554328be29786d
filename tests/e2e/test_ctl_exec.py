# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent-sandboxctl exec, shell, cp and usage as the unprivileged member, through the
real bus: pipes, a real pseudo-terminal, and files both ways."""

import json
import os
import signal
import subprocess

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER


@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "ctlexec")


@pytest.fixture
def ctl(stack):
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    return lambda *args, input="", timeout=60: stack.run_as(MEMBER, [binary, *args], input=input, timeout=timeout)


def test_exec_with_pipes(ctl, box):
    r = ctl("exec", "--env", "A=1 2", "--workdir", "/tmp", box, "--", "sh", "-c",
            'cat; echo "$A"; pwd; echo err >&2; exit 5', input="in\n")
    assert (r.returncode, r.stdout, r.stderr) == (5, "in\n1 2\n/tmp\n", "err\n")


@pytest.mark.parametrize("signal_name", ["TERM", "INT", "HUP"])
def test_exec_forwards_signals(stack, box, signal_name):
    """A signal sent to `exec` reaches the command, which handles it; `exec` exits with
    the command's own status."""
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    script = f'trap "echo got-{signal_name}; exit 7" {signal_name}; echo ready; while :; do sleep 0.1; done'
    p = stack.spawn_as(MEMBER, [binary, "--no-ask-password", "exec", box, "--", "sh", "-c", script])
    try:
        assert p.stdout.readline() == "ready\n"
        # runuser's child is xagent-sandboxctl (env execs it): signal it, not runuser.
        with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
            (ctl_pid,) = [int(c) for c in f.read().split()]
        os.kill(ctl_pid, getattr(signal, "SIG" + signal_name))
        assert p.wait(timeout=30) == 7, p.stderr.read()
        # (busybox sh may run a HUP trap twice: the signal reaches the shell and its sleep)
        assert f"got-{signal_name}\n" in p.stdout.read()
    finally:
        p.kill()
        p.wait()


def test_exec_timeout_and_usage_errors(ctl, box):
    r = ctl("exec", "--timeout", "1", box, "--", "sh", "-c", "echo before; sleep 60")
    assert (r.returncode, r.stdout, r.stderr) == (124, "before\n", "timed out after 1 s\n")
    assert ctl("exec", box).returncode == 2
    assert ctl("exec", "--env", "novalue", box, "--", "true").returncode == 2
    r = ctl("exec", "--workdir", "tmp", box, "--", "true")
    assert r.returncode == 1 and "InvalidArgs: working_dir" in r.stderr


def on_pty(stack, argv, keystrokes, timeout=30):
    """Runs argv as the member on a new pseudo-terminal (31 rows, 97 columns), types
    keystrokes once the program is ready, returns (exit status, everything it printed)."""
    return stack.run_on_terminal(MEMBER, argv, keystrokes, size=(31, 97), timeout=timeout,
                                 path="/usr/sbin:/usr/bin:/sbin:/bin", send_after=2)


def test_exec_with_a_terminal(stack, box):
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    status, out = on_pty(stack, [binary, "--no-ask-password", "exec", "-t", box, "--", "sh", "-c",
                                 "sleep 0.5; tty; stty size; read line; echo got:$line; exit 4"], b"typed\r")
    assert status == 4, out
    assert "/dev/pts/" in out and "got:typed" in out
    # The local terminal's size, set just after the start (Docker 20.10's API has no
    # size at exec creation): the sleep lets it land first.
    assert "31 97" in out, out


def test_shell(stack, box):
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    status, out = on_pty(stack, [binary, "--no-ask-password", "shell", box], b"id -u; exit 6\r")
    assert status == 6, out
    assert str(h.uid_of(MEMBER)) in out


def test_cp_both_ways(ctl, box, cleanup):
    ws = cleanup.workspace(MEMBER, "cp")
    src = os.path.join(ws, "project")
    os.makedirs(os.path.join(src, "sub"))
    with open(os.path.join(src, "sub", "f.txt"), "w") as f:
        f.write("content\n")
    subprocess.run(["chown", "-R", f"{h.uid_of(MEMBER)}:{h.gid_of(MEMBER)}", src], check=True)
    r = ctl("cp", src, f"{box}:/tmp")
    assert r.returncode == 0, r.stderr
    r = ctl("exec", box, "--", "cat", "/tmp/project/sub/f.txt")
    assert r.stdout == "content\n"
    back = os.path.join(ws, "back")
    os.mkdir(back)
    os.chown(back, h.uid_of(MEMBER), h.gid_of(MEMBER))
    r = ctl("cp", f"{box}:/tmp/project", back)
    assert r.returncode == 0, r.stderr
    with open(os.path.join(back, "project", "sub", "f.txt")) as f:
        assert f.read() == "content\n"
    assert os.stat(os.path.join(back, "project", "sub", "f.txt")).st_uid == h.uid_of(MEMBER)
    assert ctl("cp", src, back).returncode == 2
    r = ctl("cp", f"{box}:/no/such", back)
    assert r.returncode == 1 and "guest_path" in r.stderr


def test_usage(ctl, box):
    u = json.loads(ctl("--json", "usage", box).stdout)
    assert u["memory_limit_bytes"] == 512 * 1024 * 1024 and u["pids"] >= 1
    r = ctl("usage", box)
    assert r.returncode == 0 and "cpu_usage_ns: " in r.stdout


def test_exec_json_captures(ctl, box):
    r = ctl("--json", "exec", "--timeout", "5", box, "--", "sh", "-c",
            "cat; printf 'bad\\377' >&2; exit 3", input="from stdin")
    assert r.returncode == 3, r.stderr
    assert json.loads(r.stdout) == {"exit_status": 3, "stdout": "from stdin", "stderr": "bad\ufffd",
                                    "truncated": False}
    # A captured run that times out keeps its output (on_timeout "result"): status 124.
    r = ctl("--json", "exec", "--timeout", "1", box, "--", "sh", "-c", "echo so-far; sleep 30")
    assert (r.returncode, r.stderr) == (124, "timed out after 1 s\n"), r.stderr
    assert json.loads(r.stdout) == {"exit_status": 124, "stdout": "so-far\n", "stderr": "", "truncated": False}


def test_owner_option_reaches_the_members_sandbox_as_root(stack, box):
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    r = stack.run_as("root", [binary, "--owner", MEMBER, "exec", box, "--", "id", "-u"], input="")
    assert (r.returncode, r.stdout) == (0, f"{h.uid_of(MEMBER)}\n"), r.stderr
    r = stack.run_as("root", [binary, "--owner", MEMBER, "--json", "usage", box], input="")
    assert r.returncode == 0 and json.loads(r.stdout)["pids"] >= 1, r.stderr
    r = stack.run_as("root", [binary, "exec", box, "--", "true"], input="")
    assert r.returncode == 1 and "NoSuchSandbox" in r.stderr


def test_roots_copy_out_passes_the_filter(stack, ctl, box, tmp_path):
    """What root copies out of a member's sandbox is checked like a copy in: no setuid
    bits, and a link leading out refuses the copy naming it; a failed bus call does not
    leave cp waiting on its tar."""
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")

    def root_cp(*args):
        return stack.run_as("root", [binary, "--owner", MEMBER, "cp", *args], input="", timeout=60)

    r = ctl("exec", box, "--", "sh", "-c", "rm -rf /tmp/out && mkdir /tmp/out && echo x > /tmp/out/s && "
            "chmod 4755 /tmp/out/s && ln -s s /tmp/out/rel")
    assert r.returncode == 0, r.stderr
    dst = tmp_path / "dst"
    dst.mkdir()
    r = root_cp(f"{box}:/tmp/out", str(dst))
    assert r.returncode == 0, r.stderr
    st = os.stat(dst / "out" / "s")
    assert (st.st_uid, st.st_mode & 0o7777) == (0, 0o755)
    assert os.readlink(dst / "out" / "rel") == "s"

    assert ctl("exec", box, "--", "ln", "-s", "/etc/shadow", "/tmp/out/abs").returncode == 0
    r = root_cp(f"{box}:/tmp/out", str(tmp_path))
    assert r.returncode == 1 and "'out/abs'" in r.stderr and "outside" in r.stderr, r.stderr
    assert not os.path.lexists(tmp_path / "out" / "abs")
    # An owner the bus call cannot be made for: cp fails at once instead of waiting on tar.
    r = stack.run_as("root", [binary, "--owner", "no-such-user-xyz", "cp", f"{box}:/tmp/out", str(tmp_path)],
                     input="", timeout=30)
    assert r.returncode == 1, r
