# SPDX-License-Identifier: LGPL-2.1-or-later
"""Using a sandbox (ExecSandbox, StartExec, GetSandboxUsage, bound ports), as the
unprivileged users would: what runs is the owner's uid with no capabilities, output
arrives whole or marked truncated, timeouts and vanished callers leave nothing running,
and another user gets nothing."""

import json
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER, ROOT

NOT_RUNNING = h.ERR + "NotRunning"
TIMED_OUT = h.ERR + "TimedOut"


@pytest.fixture(scope="module")
def box(stack, docker_image):
    """One running sandbox of the member's, with an ephemeral published port."""
    bus = h.Sandboxd(stack)
    name = h.unique("exec")
    cleanup = h.Cleanup(bus)
    cleanup.sandbox(name)
    bus.create(MEMBER, name, h.spec(ports=[(0, 8080)])).result
    yield name
    assert cleanup.run() == []


def run(sandboxd, user, name, argv, options=None, **kw):
    """ExecSandbox; (status, stdout, stderr, truncated) with the outputs as str."""
    status, out, err, truncated = sandboxd.call(user, "ExecSandbox", "sasa{sv}",
                                                [name, argv, options or {}], **kw).result
    return status, bytes(out).decode(), bytes(err).decode(), truncated


def processes(sandboxd, name):
    """The command lines running in the sandbox (as root sees them through ps)."""
    _, out, _, _ = run(sandboxd, ROOT, name, ["ps", "-o", "args"])
    return [p for p in out.splitlines()[1:] if p != "ps -o args"]


def test_runs_as_owner_with_streams_and_status(sandboxd, box):
    status, out, err, truncated = run(sandboxd, MEMBER, box, ["sh", "-c", "id -u; id -g; echo err >&2; exit 3"])
    assert (status, out, err, truncated) == (3, f"{h.uid_of(MEMBER)}\n{h.gid_of(MEMBER)}\n", "err\n", False)


def test_root_and_the_object_run_as_the_owner_too(sandboxd, box):
    assert run(sandboxd, ROOT, box, ["id", "-u"])[1] == f"{h.uid_of(MEMBER)}\n"
    r = sandboxd.call(MEMBER, "Exec", "asa{sv}", [["id", "-u"], {}], path=h.object_path(box), iface=h.SANDBOX)
    assert r.result[0] == 0 and bytes(r.result[1]).decode() == f"{h.uid_of(MEMBER)}\n"


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
    status, _, err, _ = run(sandboxd, MEMBER, box, ["/no/such/command"])
    assert status in (126, 127)
    assert processes(sandboxd, box) == ["/.xagent-sandbox/xagent-sandbox-init"]


def test_authorization(sandboxd, box):
    path = h.object_path(box)
    r = sandboxd.call(OTHER, "ExecSandbox", "sasa{sv}", [box, ["id"], {}])
    assert "exec-others" in r.error(h.INTERACTIVE)
    r = sandboxd.call(OTHER, "ExecSandbox", "sasa{sv}", [box, ["id"], {}], interactive=True)
    assert "exec-others" in r.error(h.ACCESS_DENIED)
    sandboxd.call(OTHER, "Exec", "asa{sv}", [["id"], {}], path=path, iface=h.SANDBOX).error(*h.DENIED)
    sandboxd.call(OTHER, "GetSandboxUsage", "s", [box]).error(*h.DENIED)
    r = stack_start_exec(sandboxd.stack, OTHER, box, ["id"])
    assert r.returncode == 250 and "exec-others" in r.stderr


def test_usage(sandboxd, box):
    u = sandboxd.call(MEMBER, "GetSandboxUsage", "s", [box]).result[0]
    assert u["memory_limit_bytes"] == 512 * 1024 * 1024
    assert 0 < u["memory_bytes"] < u["memory_limit_bytes"]
    assert u["pids"] >= 1 and u["cpu_usage_ns"] > 0
    assert "net_rx_bytes" in u and "net_tx_bytes" in u
    u2 = sandboxd.call(MEMBER, "GetUsage", path=h.object_path(box), iface=h.SANDBOX).result[0]
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


def test_stream_timeout(stack, box):
    r = stack_start_exec(stack, MEMBER, box, ["sleep", "304"], {"timeout": ["u", 1]})
    assert r.returncode == 128 + 9, r.stderr


def test_a_vanished_callers_exec_is_killed(stack, sandboxd, box):
    r = stack_start_exec(stack, MEMBER, box, ["sh", "-c", "sleep 305 & sleep 306"], {}, "--vanish")
    assert r.returncode == 0 and "/org/xagent/Sandbox1/exec/" in r.stderr
    for _ in range(50):
        if not [p for p in processes(sandboxd, box) if "sleep 30" in p]:
            break
        time.sleep(0.2)
    else:
        pytest.fail("the vanished caller's processes still run")


def test_not_running(sandboxd, box):
    sandboxd.stop(MEMBER, box, timeout=1).result
    try:
        r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["true"], {}])
        r.error(NOT_RUNNING)
        r = stack_start_exec(sandboxd.stack, MEMBER, box, ["true"])
        assert r.returncode == 250 and "NotRunning" in r.stderr
    finally:
        sandboxd.start(MEMBER, box).result
