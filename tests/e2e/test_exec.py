# SPDX-License-Identifier: LGPL-2.1-or-later
"""Using a sandbox (ExecSandbox, StartExec, GetSandboxUsage, bound ports), as the
unprivileged users would: what runs is the owner's uid with no capabilities, output
arrives whole or marked truncated, timeouts and vanished callers leave nothing running,
and another user gets nothing."""

import json
import os
import tarfile
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER, ROOT

EXEC = "org.xagent.Sandbox1.Exec"
NOT_RUNNING = h.ERR + "NotRunning"
TIMED_OUT = h.ERR + "TimedOut"
CHANNEL = "/.xagent-sandbox/xagent-sandbox-init --serve"


@pytest.fixture(scope="module")
def box(stack, docker_image):
    """One running sandbox of the member's, with an ephemeral published port."""
    yield from h.running_sandbox(stack, "exec", h.spec(ports=[(0, 8080)]))


def run(sandboxd, user, name, argv, options=None, **kw):
    """ExecSandbox; (status, stdout, stderr, truncated) with the outputs as str."""
    status, out, err, truncated = sandboxd.call(user, "ExecSandbox", "sasa{sv}",
                                                [name, argv, options or {}], **kw).result
    return status, bytes(out).decode(), bytes(err).decode(), truncated


def path_of(sandboxd, name):
    """The member's sandbox's object: how root and others reach it (names are per owner)."""
    return sandboxd.get(MEMBER, name).result[0]


def processes(sandboxd, name):
    """The command lines running in the sandbox (through ps; asked by root, through the
    object, so that it takes none of the member's exec slots), but the service's kept
    channel (its program and the supervisor of the ps, docs/architecture.md)."""
    r = sandboxd.call(ROOT, "Exec", "asa{sv}", [["ps", "-o", "args"], {}], path=path_of(sandboxd, name),
                      iface=h.SANDBOX)
    out = bytes(r.result[1]).decode()
    return [p for p in out.splitlines()[1:] if p not in ("ps -o args", CHANNEL)]


def test_runs_as_owner_with_streams_and_status(sandboxd, box):
    status, out, err, truncated = run(sandboxd, MEMBER, box, ["sh", "-c", "id -u; id -g; echo err >&2; exit 3"])
    assert (status, out, err, truncated) == (3, f"{h.uid_of(MEMBER)}\n{h.gid_of(MEMBER)}\n", "err\n", False)


def test_root_and_the_object_run_as_the_owner_too(sandboxd, box):
    path = path_of(sandboxd, box)
    for user in (ROOT, MEMBER):
        r = sandboxd.call(user, "Exec", "asa{sv}", [["id", "-u"], {}], path=path, iface=h.SANDBOX)
        assert r.result[0] == 0 and bytes(r.result[1]).decode() == f"{h.uid_of(MEMBER)}\n"
    # By name, root acts in its own namespace: the member's sandbox is not there.
    sandboxd.call(ROOT, "ExecSandbox", "sasa{sv}", [box, ["true"], {}]).error(h.ERR + "NoSuchSandbox")


def test_no_capabilities(sandboxd, box):
    _, out, _, _ = run(sandboxd, MEMBER, box, ["grep", "^Cap", "/proc/self/status"])
    caps = dict(line.split(":\t") for line in out.splitlines())
    assert caps["CapEff"] == caps["CapPrm"] == caps["CapAmb"] == "0000000000000000"


def test_stdin_env_and_working_dir(sandboxd, box):
    opts = {"stdin": ["ay", list(b"from stdin\n")], "env": ["a{ss}", {"GREETING": "hi there"}],
            "working_dir": ["s", "/tmp"]}
    status, out, _, _ = run(sandboxd, MEMBER, box, ["sh", "-c", 'cat; echo "$GREETING"; pwd'], opts)
    assert (status, out) == (0, "from stdin\nhi there\n/tmp\n")


def test_output_beyond_the_limit_is_dropped(sandboxd, box):
    status, out, err, truncated = run(sandboxd, MEMBER, box, ["sh", "-c", "head -c 5000 /dev/zero; echo e >&2"],
                                      {"output_limit": ["t", 1000]})
    assert (status, len(out), err, truncated) == (0, 1000, "e\n", True)


def test_killed_by_a_signal(sandboxd, box):
    assert run(sandboxd, MEMBER, box, ["sh", "-c", "kill -TERM $$"])[0] == 128 + 15


def test_timeout_kills_the_process_and_its_children(sandboxd, box):
    t0 = time.monotonic()
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}",
                      [box, ["sh", "-c", "sleep 301 & sleep 302"], {"timeout": ["u", 1]}])
    assert "1 s" in r.error(TIMED_OUT)
    assert time.monotonic() - t0 < 15
    assert not [p for p in processes(sandboxd, box) if "sleep 30" in p]


@pytest.mark.parametrize("argv,options,needle", [
    ([], {}, "argv"),
    ([""], {}, "argv"),
    (["true"], {"bogus": ["s", "x"]}, "bogus: unknown option"),
    (["true"], {"timeout": ["u", 0]}, "timeout"),
    (["true"], {"timeout": ["u", 86401]}, "timeout"),
    (["true"], {"output_limit": ["t", 16 * 1024 * 1024 + 1]}, "output_limit"),
    (["true"], {"working_dir": ["s", "tmp"]}, "working_dir"),
    (["true"], {"env": ["a{ss}", {"A=B": "x"}]}, "env"),
    (["true"], {"tty": ["b", True]}, "tty: unknown option"),
])
def test_bad_input_names_the_field(sandboxd, box, argv, options, needle):
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, argv, options])
    assert needle in r.error(h.INVALID_ARGS)


def test_a_missing_command_leaves_nothing_running(sandboxd, box):
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["/no/such/command"], {}])
    assert "argv[0]" in r.error(h.INVALID_ARGS)
    assert processes(sandboxd, box) == ["/.xagent-sandbox/xagent-sandbox-init"]


def test_authorization(sandboxd, box):
    path = path_of(sandboxd, box)
    r = sandboxd.call(OTHER, "Exec", "asa{sv}", [["id"], {}], path=path, iface=h.SANDBOX)
    assert "exec-others" in r.error(h.INTERACTIVE)
    r = sandboxd.call(OTHER, "Exec", "asa{sv}", [["id"], {}], path=path, iface=h.SANDBOX, interactive=True)
    assert "exec-others" in r.error(h.ACCESS_DENIED)
    sandboxd.call(OTHER, "GetUsage", path=path, iface=h.SANDBOX).error(*h.DENIED)
    sandboxd.call(OTHER, "CopyFrom", "sha{sv}", ["/tmp", ">/dev/null", {}], path=path,
                  iface=h.SANDBOX).error(*h.DENIED)
    # By name, sbx-other (no group member) asks about its own namespace: polkit's
    # exec wants a password before anything is looked up.
    assert "sandbox1.exec" in sandboxd.call(OTHER, "ExecSandbox", "sasa{sv}", [box, ["id"], {}]).error(h.INTERACTIVE)
    r = stack_start_exec(sandboxd.stack, OTHER, box, ["id"])
    assert r.returncode == 250 and "InteractiveAuthorizationRequired" in r.stderr


def test_usage(sandboxd, box):
    u = sandboxd.call(MEMBER, "GetSandboxUsage", "s", [box]).result[0]
    assert u["memory_limit_bytes"] == 512 * 1024 * 1024
    assert 0 < u["memory_bytes"] < u["memory_limit_bytes"]
    assert u["pids"] >= 1 and u["cpu_usage_ns"] > 0
    assert "net_rx_bytes" in u and "net_tx_bytes" in u
    u2 = sandboxd.call(MEMBER, "GetUsage", path=path_of(sandboxd, box), iface=h.SANDBOX).result[0]
    assert u2["cpu_usage_ns"] >= u["cpu_usage_ns"]


def test_bound_ports(sandboxd, box):
    inspection = sandboxd.inspect(MEMBER, box).result[0]
    assert inspection["ports"] == [[0, 8080]]
    [(address, port, guest)] = inspection["bound_ports"]
    assert (address, guest) == ("127.0.0.1", 8080) and port > 0
    cid = inspection["container_id"]
    docker_port = h.docker_inspect(cid)["NetworkSettings"]["Ports"]["8080/tcp"][0]["HostPort"]
    assert port == int(docker_port)


# ---- streaming ------------------------------------------------------------------------

def stack_start_exec(stack, user, name, argv, options=None, *flags, input=None, timeout=60):
    """client.py start-exec as user: the exec's streams are the client's own."""
    return stack.run_as(user, stack.client_argv("start-exec", name, json.dumps(argv), json.dumps(options or {}),
                                                *flags), input=input, timeout=timeout)


def test_stream_stdin_stdout_stderr_status(stack, box):
    r = stack_start_exec(stack, MEMBER, box, ["sh", "-c", "cat; echo err >&2; exit 7"], input="hello\n")
    assert r.returncode == 7, r.stderr
    assert r.stdout == "hello\n"
    assert r.stderr.splitlines()[-1] == "err"


def test_stream_20_mb_arrive_whole(stack, box):
    r = stack_start_exec(stack, MEMBER, box, ["sh", "-c", "yes y | tr -d '\\n' | head -c 20000000"], timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    assert len(r.stdout) == 20000000 and set(r.stdout) == {"y"}


def test_stream_with_a_terminal(stack, box):
    r = stack_start_exec(stack, MEMBER, box, ["sh", "-c", "sleep 0.5; tty; stty size; echo e >&2"],
                         {"tty": ["b", True], "rows": ["q", 33], "cols": ["q", 101]}, input="")
    assert r.returncode == 0, r.stderr
    # (text mode turns the terminal's \r\n into \n; stderr shares the terminal)
    assert r.stdout.startswith("/dev/pts/") and "33 101\ne\n" in r.stdout


def test_stream_kill(stack, box):
    r = stack_start_exec(stack, MEMBER, box, ["sleep", "303"], {}, "--kill", "TERM")
    assert r.returncode == 128 + 15, r.stderr


def test_stream_resize(stack, box):
    """Resize reaches the process's terminal: it waits (10 s at most) for the new size."""
    wait = 'i=0; while [ "$(stty size)" != "40 120" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; stty size'
    r = stack_start_exec(stack, MEMBER, box, ["sh", "-c", wait],
                         {"tty": ["b", True], "rows": ["q", 33], "cols": ["q", 101]}, "--resize", "40,120", input="")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == "40 120", r.stdout


def test_only_the_starter_signals_or_resizes(stack, sandboxd, box):
    """Another user can neither Kill nor Resize a member's exec; each refusal and the
    member's own Kill are audited."""
    mark = h.LogMark(stack)
    p = stack.spawn_as(MEMBER, stack.client_argv("start-exec", box, json.dumps(["sleep", "308"]), "{}"))
    try:
        path = json.loads(p.stderr.readline())["exec"]

        def call(user, method, sig, args):
            return sandboxd.call(user, method, sig, args, path=path, iface=EXEC)

        assert "another user" in call(OTHER, "Kill", "s", ["KILL"]).error(h.ACCESS_DENIED)
        assert "another user" in call(OTHER, "Resize", "qq", [40, 120]).error(h.ACCESS_DENIED)
        props = sandboxd.call(OTHER, "GetAll", "s", [EXEC], path=path, iface=h.PROPERTIES)
        assert "another user" in props.error(h.ACCESS_DENIED)
        assert sandboxd.call(MEMBER, "GetAll", "s", [EXEC], path=path, iface=h.PROPERTIES).result[0]["Sandbox"] == box
        assert "no terminal" in call(MEMBER, "Resize", "qq", [40, 120]).error(h.INVALID_ARGS)
        assert "NO\x1bSUCH" in call(MEMBER, "Kill", "s", ["NO\x1bSUCH"]).error(h.INVALID_ARGS)
        call(MEMBER, "Kill", "s", ["TERM"]).result
        assert p.wait(timeout=30) == 128 + 15
    finally:
        p.kill()
        p.wait()
    log = mark.new()
    owner = h.uid_of(MEMBER)
    for uid, verb, outcome in ((h.uid_of(OTHER), "exec-kill", h.ACCESS_DENIED),
                               (h.uid_of(OTHER), "exec-resize", h.ACCESS_DENIED),
                               (owner, "exec-kill", h.INVALID_ARGS),
                               (owner, "exec-kill", "ok")):
        assert f'AUDIT uid={uid} verb={verb} sandbox="{box}" outcome={outcome} owner={owner}' in log, log
    # What the caller sent is in the reason, its control characters escaped: one line.
    assert 'reason="signal: \'NO\\x1bSUCH\' is not a signal name' in log, log


def test_stream_timeout(stack, box):
    r = stack_start_exec(stack, MEMBER, box, ["sleep", "304"], {"timeout": ["u", 1]})
    assert r.returncode == 128 + 9, r.stderr


@pytest.mark.parametrize("argv,options,needle", [
    (["/no/such/command"], {}, "argv[0]: '/no/such/command'"),
    (["no-such-command-in-path"], {}, "argv[0]: 'no-such-command-in-path': no such command in PATH"),
    (["true"], {"working_dir": ["s", "/nope"]}, "working_dir: '/nope'"),
    (["true"], {"working_dir": ["s", "/nope"], "tty": ["b", True]}, "working_dir: '/nope'"),
])
def test_stream_start_failure_is_typed(stack, sandboxd, box, argv, options, needle):
    """A process that cannot be started is InvalidArgs naming the field (no object, no
    exit 126 with the runtime's text on stdout), and holds no exec slot afterwards."""
    r = stack_start_exec(stack, MEMBER, box, argv, options, input="")
    assert r.returncode == 250, (r.returncode, r.stdout, r.stderr)
    error = json.loads(r.stderr)
    assert error["error"] == h.INVALID_ARGS and needle in error["message"], error
    assert r.stdout == ""
    assert processes(sandboxd, box) == ["/.xagent-sandbox/xagent-sandbox-init"]


def test_stream_quick_exits_are_not_start_failures(stack, box):
    """A process that ran and exited at once with 126 or 127 is its own status."""
    for code in (0, 126, 127):
        r = stack_start_exec(stack, MEMBER, box, ["sh", "-c", f"exit {code}"], input="")
        assert r.returncode == code, r.stderr


def test_a_vanished_callers_exec_is_killed(stack, sandboxd, box):
    r = stack_start_exec(stack, MEMBER, box, ["sh", "-c", "sleep 305 & sleep 306"], {}, "--vanish")
    assert r.returncode == 0 and "/org/xagent/Sandbox1/exec/" in r.stderr
    for _ in range(50):
        if not [p for p in processes(sandboxd, box) if "sleep 30" in p]:
            break
        time.sleep(0.2)
    else:
        pytest.fail("the vanished caller's processes still run")


def test_nothing_runs_in_a_start_the_service_did_not_verify(sandboxd, cleanup):
    """A member's container started behind the service's back (its mounts never
    checked) runs nothing of the owner's until a Start has verified it."""
    name = cleanup.sandbox(h.unique("unverified"))
    sandboxd.create(MEMBER, name, h.spec()).result
    cid = sandboxd.inspect(MEMBER, name).result[0]["container_id"]
    sandboxd.stop(MEMBER, name, timeout=0).result
    status, data = h.docker("POST", f"/containers/{cid}/start")
    assert status == 204, data
    msg = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["true"], {}]).error(NOT_RUNNING)
    assert "start it" in msg, msg
    sandboxd.start(MEMBER, name).result
    assert sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["true"], {}]).result[0] == 0
    sandboxd.delete(MEMBER, name).result


def test_not_running(sandboxd, box):
    sandboxd.stop(MEMBER, box, timeout=1).result
    try:
        r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["true"], {}])
        r.error(NOT_RUNNING)
        r = stack_start_exec(sandboxd.stack, MEMBER, box, ["true"])
        assert r.returncode == 250 and "NotRunning" in r.stderr
    finally:
        sandboxd.start(MEMBER, box).result


# ---- copies ---------------------------------------------------------------------------

def make_tar(path, entries, owner=MEMBER):
    """entries: (TarInfo fields as a dict, bytes or None); the file is owner's."""
    with open(path, "wb") as f:
        f.write(h.module("tarlib.py", "tarlib").archive(entries))
    os.chown(path, h.uid_of(owner), h.gid_of(owner))
    return path


def copy_to(sandboxd, user, box, guest_dir, tar_path):
    return sandboxd.call(user, "CopyToSandbox", "ssha{sv}", [box, guest_dir, "<" + tar_path, {}])


def test_copy_in_as_the_owner_without_special_bits(sandboxd, box, cleanup):
    ws = cleanup.workspace(MEMBER, "copy")
    tar = make_tar(os.path.join(ws, "in.tar"), [
        ({"name": "proj", "type": tarfile.DIRTYPE, "mode": 0o755}, None),
        ({"name": "proj/a.txt", "mode": 0o644, "uid": 0, "gid": 0, "uname": "root"}, b"hello\n"),
        ({"name": "proj/suid", "mode": 0o6755, "uid": 0}, b"#!/bin/sh\n"),
        ({"name": "proj/link", "type": tarfile.SYMTYPE, "linkname": "a.txt"}, None),
        ({"name": "proj/" + "d" * 150 + "/long.txt", "mode": 0o600}, b"long\n"),
    ])
    run(sandboxd, MEMBER, box, ["mkdir", "-p", "/tmp/in"])
    copy_to(sandboxd, MEMBER, box, "/tmp/in", tar).result
    status, out, err, _ = run(sandboxd, MEMBER, box, ["sh", "-c", "cd /tmp/in/proj && stat -c '%u:%g %a %n' a.txt suid "
                                                      "d*/long.txt && readlink link && cat a.txt"])
    ids = f"{h.uid_of(MEMBER)}:{h.gid_of(MEMBER)}"
    assert status == 0, err
    assert out.splitlines() == [f"{ids} 644 a.txt", f"{ids} 755 suid", f"{ids} 600 {'d' * 150}/long.txt",
                                "a.txt", "hello"]


@pytest.mark.parametrize("entries,needle", [
    ([({"name": "../evil"}, b"x")], "'..'"),
    ([({"name": "/evil"}, b"x")], "absolute"),
    ([({"name": "l", "type": tarfile.SYMTYPE, "linkname": "../.."}, None)], "outside"),
    ([({"name": "l", "type": tarfile.SYMTYPE, "linkname": "/tmp"}, None)], "outside"),
    ([({"name": "l", "type": tarfile.SYMTYPE, "linkname": "."}, None), ({"name": "l/evil"}, b"x")],
     "symbolic link"),
    ([({"name": "dev", "type": tarfile.CHRTYPE, "devmajor": 1, "devminor": 3}, None)], "devices"),
    ([({"name": "fifo", "type": tarfile.FIFOTYPE}, None)], "FIFO"),
    ([({"name": "hard", "type": tarfile.LNKTYPE, "linkname": "../evil"}, None)], "hard link"),
    ([({"name": "d/" * 2047 + "nnn"}, b"x")], "a name longer than 4096 bytes, the limit of a copy"),
    ([({"name": "l", "type": tarfile.SYMTYPE, "linkname": "t/" * 1024 + "t"}, None)],
     "target of more than 1024 components, the limit of a copy"),
])
def test_copy_refuses_a_hostile_tar(sandboxd, box, cleanup, entries, needle):
    ws = cleanup.workspace(MEMBER, "hostile")
    tar = make_tar(os.path.join(ws, "bad.tar"), [({"name": "ok.txt"}, b"fine\n")] + entries)
    run(sandboxd, MEMBER, box, ["sh", "-c", "rm -rf /tmp/h /tmp/evil; mkdir -p /tmp/h"])
    assert needle in copy_to(sandboxd, MEMBER, box, "/tmp/h", tar).error(h.INVALID_ARGS)
    _, out, _, _ = run(sandboxd, MEMBER, box, ["sh", "-c", "ls -A /tmp/h; ls /tmp/evil /evil 2>/dev/null; true"])
    assert out.split() in ([], ["ok.txt"])


def test_copy_refuses_what_is_not_tar(sandboxd, box, cleanup):
    ws = cleanup.workspace(MEMBER, "nottar")
    p = os.path.join(ws, "x.tar")
    with open(p, "wb") as f:
        f.write(b"this is not a tar archive\n" * 100)
    os.chown(p, h.uid_of(MEMBER), h.gid_of(MEMBER))
    assert "not a tar stream" in copy_to(sandboxd, MEMBER, box, "/tmp", p).error(h.INVALID_ARGS)
    assert "guest_dir" in copy_to(sandboxd, MEMBER, box, "tmp", p).error(h.INVALID_ARGS)
    assert "guest_dir" in copy_to(sandboxd, MEMBER, box, "/no/such/dir",
                                  make_tar(os.path.join(ws, "ok.tar"), [({"name": "f"}, b"")])).error(h.INVALID_ARGS)
    assert processes(sandboxd, box) == ["/.xagent-sandbox/xagent-sandbox-init"]


def test_copy_out(sandboxd, box, cleanup):
    ws = cleanup.workspace(MEMBER, "out")
    run(sandboxd, MEMBER, box, ["sh", "-c", "mkdir -p /tmp/o/sub && echo data > /tmp/o/sub/f && chmod 600 /tmp/o/sub/f"])
    out = os.path.join(ws, "out.tar")
    sandboxd.call(MEMBER, "CopyFromSandbox", "ssha{sv}", [box, "/tmp/o", ">" + out, {}]).result
    with tarfile.open(out) as t:
        assert t.extractfile("o/sub/f").read() == b"data\n"
    r = sandboxd.call(MEMBER, "CopyFromSandbox", "ssha{sv}", [box, "/no/such", ">" + out, {}])
    assert "guest_path" in r.error(h.INVALID_ARGS)
    r = sandboxd.call(OTHER, "CopyFromSandbox", "ssha{sv}", [box, "/tmp/o", ">/dev/null", {}])
    r.error(h.INTERACTIVE)


# ---- limits and the daemon's exit ------------------------------------------------------

def test_limits_and_nothing_outlives_the_daemon(stack, sandboxd, box):
    with h.daemon_config(stack, {"max_execs_per_user": 1}):
        p = stack.spawn_as(MEMBER, stack.client_argv("start-exec", box, json.dumps(["sleep", "307"]), "{}"))
        try:
            assert "/org/xagent/Sandbox1/exec/" in p.stderr.readline()
            r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["true"], {}])
            assert "max_execs_per_user" in r.error(h.LIMITS_EXCEEDED)
            assert [q for q in processes(sandboxd, box) if "sleep 307" in q]
            stack.stop_daemon()         # SIGTERM: the running exec is killed on the way out
        finally:
            p.kill()
            p.wait()
    assert not [q for q in processes(sandboxd, box) if "sleep 307" in q]
