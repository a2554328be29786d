# SPDX-License-Identifier: LGPL-2.1-or-later
"""gVisor (runsc) as a sandbox's runtime (docs/security.md, "Runtimes"): a private dockerd
in its own network namespace (tests/fault/privdocker.py) with runsc registered in its own
daemon.json, the service pointed at it by the host policy's engine.host and offering
{"gvisor": {"engine_runtime": "runsc"}}; the member uses it through the real bus and
polkitd, and the CLI. The shared dockerd is not touched. One sandbox serves every
operation; the refusals make nothing. Takes about a minute."""

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import pytest

import privengine
import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fault"))
import privdocker  # noqa: E402

RUNSC = "/usr/bin/runsc"
PIDS_LIMIT = 64
RUNSC_ENTRY = {"path": RUNSC, "runtimeArgs": ["--network=none"]}
ISOLATED = h.spec(network_isolated=True)


class RunscDocker(privdocker.PrivateDocker):
    """The private dockerd, runsc registered in its own daemon.json ("runsc", and a
    "runsc-kvm" whose platform this machine lacks: its starts fail)."""

    def write_runtimes(self, runsc_path=RUNSC):
        os.makedirs(self.tmp, exist_ok=True)
        with open(self.config_file, "w") as f:
            runsc = RUNSC_ENTRY if runsc_path == RUNSC else {"path": runsc_path}
            json.dump({"runtimes": {"runsc": runsc,
                                    "runsc-kvm": dict(RUNSC_ENTRY, runtimeArgs=["--network=none",
                                                                                "--platform=kvm"])}}, f)

    def runsc_pids(self):
        """runsc's processes of this dockerd (its temp dir on their command line)."""
        out = []
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            cmd = privengine._cmdline(pid)
            if cmd and cmd.startswith("runsc") and self.tmp in cmd:
                out.append(pid)
        return out

    def teardown(self, remove_tmp=True):
        problems = super().teardown(remove_tmp=False)
        for pid in self.runsc_pids():
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        h.wait_until(lambda: not self.runsc_pids(), 10, 0.1, "runsc's processes gone")
        if remove_tmp and not problems:
            shutil.rmtree(self.tmp, ignore_errors=True)
        return problems


def policy(docker, **extra):
    return dict({"engine": {"host": docker.host}, "pids_limit": PIDS_LIMIT,
                 "runtimes": {"gvisor": {"engine_runtime": "runsc"}, "broken": {"engine_runtime": "runsc-kvm"}}},
                **extra)


@pytest.fixture(scope="module")
def docker(stack):
    assert os.access(RUNSC, os.X_OK), "runsc is missing: run tools/install-deps.sh"
    tmp = tempfile.mkdtemp(prefix="sbx-gvisor-")
    os.chmod(tmp, 0o711)
    d = RunscDocker(os.path.join(tmp, "docker"))
    try:
        d.write_runtimes()
        d.start()
        stack.stop_daemon()
        h.write_config(stack, policy(d))
        yield d
    finally:
        stack.stop_daemon()
        if os.path.exists(stack.config_path):
            os.unlink(stack.config_path)
        d.teardown()
        shutil.rmtree(tmp, ignore_errors=True)


def ctl(stack, *args, input=""):
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    return stack.run_as(MEMBER, [binary, *args], input=input, timeout=120)


def first_process(docker, cname):
    pid = docker.inspect(cname)["State"]["Pid"]
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().split(b"\0")[0].decode()


def owned_file(docker, name):
    path = os.path.join(docker.tmp, name)
    open(path, "wb").close()
    os.chown(path, h.uid_of(MEMBER), h.gid_of(MEMBER))
    return path


def test_every_operation_under_gvisor(stack, docker):
    bus = h.Sandboxd(stack)
    name = h.unique("gv")
    cname = h.container_name(name, MEMBER)
    snap = h.unique("gvsnap")
    r = ctl(stack, "create", name, "--image", h.TEST_IMAGE, "--isolated", "--runtime", "gvisor")
    assert r.returncode == 0, r.stderr
    try:
        # the engine's view, the host's, the label and what the member sees
        hc = docker.inspect(cname)["HostConfig"]
        assert hc["Runtime"] == "runsc"
        assert hc["PidsLimit"] == PIDS_LIMIT * 16 + 256
        assert hc["Ulimits"] == [{"Name": "nproc", "Soft": PIDS_LIMIT, "Hard": PIDS_LIMIT}]
        assert docker.inspect(cname)["Config"]["Labels"]["xagent.sandbox.runtime"] == "gvisor"
        assert first_process(docker, cname) == "runsc-sandbox"
        inspection = bus.inspect(MEMBER, name).result[0]
        assert (inspection["runtime"], inspection["hardened"]) == ("gvisor", True), inspection
        assert json.loads(ctl(stack, "--json", "inspect", name).stdout)["runtime"] == "gvisor"
        assert bus.verify(MEMBER, name, ISOLATED).result == ["match", []]
        ensure = bus.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, ISOLATED, {"runtime": ["s", "gvisor"]}])
        assert ensure.result[2] == "reused"
        msg = bus.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, ISOLATED, {}]).error(h.RUNTIME_CONFLICT)
        assert "mismatched fields: runtime" in msg, msg

        # exec, files, copies
        r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", "cat; id -u"],
                                                         {"stdin": ["ay", list(b"in\n")]}]).result
        assert (r[0], bytes(r[1]).decode()) == (0, f"in\n{h.uid_of(MEMBER)}\n")
        # No channel carries commands under gVisor (the channel's program is not found under
        # Docker's pid; docs/lifecycle.md, "Commands"): the fallback, a Docker exec, so the
        # command's parent is not a supervisor forked by the channel's program (--serve).
        r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", 'echo "$PPID"; tr "\\0" " " '
                                                         '</proc/$PPID/cmdline 2>/dev/null; true'], {}]).result
        assert r[0] == 0 and "--serve" not in bytes(r[1]).decode(), bytes(r[1])
        assert bus.call(MEMBER, "WriteFile", "ssaya{sv}", [name, "/tmp/f", list(b"under gvisor"), {}]).ok
        assert bytes(bus.call(MEMBER, "ReadFile", "ssa{sv}", [name, "/tmp/f", {}]).result[0]) == b"under gvisor"
        src, out = owned_file(docker, "in.tar"), owned_file(docker, "out.tar")
        with tarfile.open(src, "w") as t:
            data = b"copied\n"
            info = tarfile.TarInfo("copied.txt")
            info.size, info.mode = len(data), 0o644
            t.addfile(info, io.BytesIO(data))
        assert bus.call(MEMBER, "CopyToSandbox", "ssha{sv}", [name, "/tmp", "<" + src, {}]).ok
        assert bus.call(MEMBER, "CopyFromSandbox", "ssha{sv}", [name, "/tmp/copied.txt", ">" + out, {}]).ok
        with tarfile.open(out) as t:
            assert t.extractfile("copied.txt").read() == b"copied\n"

        # a detached process, usage
        exec_id = ctl(stack, "exec", "--detach", name, "--", "sh", "-c", "echo detached; sleep 30").stdout.strip()
        assert len(exec_id) == 32, exec_id
        h.wait_until(lambda: ctl(stack, "output", exec_id).stdout == "detached\n", 20, 0.2, "the detached output")
        usage = bus.call(MEMBER, "GetSandboxUsage", "s", [name]).result[0]
        assert usage["memory_bytes"] > 0 and usage["pids"] > 0, usage

        # a fork bomb fails forks inside the guest; the sandbox lives on
        r = bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c",
                     "n=0; while [ $n -lt 400 ]; do sleep 20 & n=$((n+1)); done; echo $n"],
                     {"timeout": ["u", 60]}]).result
        assert r[0] != 0 and b"can't fork" in bytes(r[2]), r
        h.wait_until(lambda: bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["echo", "alive"], {}]).ok, 30,
                     0.5, "an exec after the fork bomb")
        assert bus.inspect(MEMBER, name).result[0]["state"] == "running"

        # pause, snapshot, stop/start, verify
        assert bus.call(MEMBER, "PauseSandbox", "s", [name]).ok
        assert bus.inspect(MEMBER, name).result[0]["state"] == "paused"
        assert bus.call(MEMBER, "ResumeSandbox", "s", [name]).ok
        assert bus.snapshot(MEMBER, name, snap).ok
        assert bus.stop(MEMBER, name).ok
        assert bus.start(MEMBER, name).ok
        assert first_process(docker, cname) == "runsc-sandbox"
        assert bus.verify(MEMBER, name, ISOLATED).result == ["match", []]
        assert bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["true"], {}]).result[0] == 0
        bus.call(OTHER, "Exec", "asa{sv}", [["true"], {}], path=h.object_path(name, MEMBER),
                 iface=h.SANDBOX).error(*h.DENIED)
    finally:
        bus.delete(MEMBER, name)
        bus.delete_snapshot(MEMBER, snap)
    assert docker.containers() == []
    h.wait_until(lambda: not docker.runsc_pids(), 20, 0.2, "runsc's processes gone after the delete")


def test_what_gvisor_cannot_run_is_refused(stack, docker):
    bus = h.Sandboxd(stack)
    name = h.unique("gvno")
    home = h.home_of(MEMBER)
    msg = bus.create(MEMBER, name, h.spec(), {"runtime": ["s", "gvisor"]}).error(h.POLICY_VIOLATION)
    assert "network_isolated" in msg and "gvisor#10704" in msg and "20240807" in msg, msg
    msg = bus.create(MEMBER, name, h.spec(network_isolated=True, volumes=[(home, "/work", "rw")]),
                     {"runtime": ["s", "gvisor"]}).error(h.POLICY_VIOLATION)
    assert "takes no volumes" in msg, msg
    for bad in ("runsc", "kata"):
        msg = bus.create(MEMBER, name, ISOLATED, {"runtime": ["s", bad]}).error(h.POLICY_VIOLATION)
        assert f"'{bad}' is not offered" in msg and "offered: runc, gvisor" in msg, msg
    for bad in ("", "GVisor", "a b", "x" * 33):
        msg = bus.create(MEMBER, name, ISOLATED, {"runtime": ["s", bad]}).error(h.INVALID_ARGS)
        assert "runtime:" in msg, msg
    bus.create(MEMBER, name, ISOLATED, {"runtime": ["u", 1]}).error(h.INVALID_ARGS)
    msg = bus.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, h.spec(), {"runtime": ["s", "gvisor"]}]) \
        .error(h.POLICY_VIOLATION)
    assert "gvisor#10704" in msg, msg
    policy_answer = bus.call(MEMBER, "GetPolicy").result[0]
    assert policy_answer["runtimes"] == {"runc": "runc", "gvisor": "runsc", "broken": "runsc-kvm"}
    assert docker.containers() == []


def test_a_failed_runsc_start_leaves_nothing(stack, docker):
    bus = h.Sandboxd(stack)
    name = h.unique("gvkvm")
    bus.create(MEMBER, name, ISOLATED, {"runtime": ["s", "broken"]}).error(h.ERR + "BackendError",
                                                                          h.RUNTIME_CONFLICT)
    assert docker.containers() == []
    h.wait_until(lambda: not docker.runsc_pids(), 20, 0.2, "no runsc process left")
    bus.get(MEMBER, name).error(h.NO_SUCH_SANDBOX)


def test_an_unregistered_runtime_is_a_load_error(stack, docker):
    cfg = os.path.join(docker.tmp, "unregistered.json")
    with open(cfg, "w") as f:
        json.dump(dict(policy(docker), runtimes={"kata": {"engine_runtime": "kata-runtime"}}), f)
    r = subprocess.run([stack.daemon_binary, "--check-config", cfg], capture_output=True, text=True)
    assert r.returncode != 0 and "runtimes.kata.engine_runtime: 'kata-runtime' is not a runtime the engine " \
        "has registered" in r.stderr, r.stderr
    r = subprocess.run([stack.daemon_binary, "--check-config", stack.config_path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_runsc_mapped_to_runc_behind_the_back_is_not_hardened(stack, docker):
    """The engine's "runsc" changed to runc's binary behind the service's back: the
    engine still reports runsc, the first process on the host is runc's (the service's
    init), so the sandbox is not what it asked for — refused at create, stopped at a
    start, a mismatch naming runtime."""
    bus = h.Sandboxd(stack)
    name, fresh = h.unique("gvswap"), h.unique("gvswap2")
    cname = h.container_name(name, MEMBER)
    bus.create(MEMBER, name, ISOLATED, {"runtime": ["s", "gvisor"]}).result
    try:
        assert bus.stop(MEMBER, name).ok
        docker.write_runtimes(runsc_path=shutil.which("runc"))
        docker.restart()
        msg = bus.start(MEMBER, name).error(h.RUNTIME_CONFLICT)
        assert "posture.runtime" in msg, msg
        assert docker.inspect(cname)["State"]["Running"] is False
        msg = bus.create(MEMBER, fresh, ISOLATED, {"runtime": ["s", "gvisor"]}).error(h.RUNTIME_CONFLICT)
        assert "posture.runtime" in msg, msg
        # started behind the back as well: running under runc, not hardened, a mismatch
        docker.ok("POST", f"/containers/{cname}/start")
        assert first_process(docker, cname) != "runsc-sandbox"
        h.wait_until(lambda: bus.verify(MEMBER, name, ISOLATED).result == ["mismatch", ["runtime"]], 10, 0.2,
                     "the runtime mismatch seen")
        assert bus.inspect(MEMBER, name).result[0]["hardened"] is False
    finally:
        bus.delete(MEMBER, name)
        docker.write_runtimes()
        docker.restart()
    assert docker.containers() == []


def test_python_module_and_mcp_ask_for_it(stack, docker):
    """The Python module's create(runtime=) and the MCP server's runtime argument reach
    the service: one sandbox made under gVisor through the module, a refusal through MCP."""
    bus = h.Sandboxd(stack)
    name = h.unique("gvpy")
    lib = os.path.join(stack.tmp, "gvisor-pylib")
    shutil.rmtree(lib, ignore_errors=True)
    shutil.copytree(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                 "python", "xagent_sandbox"), os.path.join(lib, "xagent_sandbox"))
    for dirpath, _, _ in os.walk(lib):
        os.chmod(dirpath, 0o755)
    program = os.path.join(stack.tmp, f"{name}.py")
    with open(program, "w") as f:
        f.write(f"""import json
from xagent_sandbox import Sandbox, SandboxError
sb = Sandbox.create({name!r}, image={h.TEST_IMAGE!r}, network_isolated=True, runtime="gvisor")
seen = {{"runtime": sb.inspect()["runtime"], "out": sb.run("echo hi").stdout}}
try:
    Sandbox.create({name + "x"!r}, image={h.TEST_IMAGE!r}, network_isolated=True, runtime="runsc")
except SandboxError as e:
    seen["refused"] = [type(e).__name__, e.message]
sb.delete()
print(json.dumps(seen))
""")
    os.chmod(program, 0o644)
    try:
        r = stack.run_as(MEMBER, ["/usr/bin/env", f"PYTHONPATH={lib}", "/usr/bin/python3", program], timeout=180)
        assert r.returncode == 0, r.stderr
        seen = json.loads(r.stdout.strip().splitlines()[-1])
        assert seen["runtime"] == "gvisor" and seen["out"] in ("hi\n", b"hi\n", "hi"), seen
        assert seen["refused"][0] == "PolicyViolation" and "'runsc' is not offered" in seen["refused"][1], seen
    finally:
        bus.delete(MEMBER, name)

    server = os.path.join(stack.build_root, "src", "mcp", "xagent-sandbox-mcp")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "sandbox_ensure", "_meta": meta,
                       "arguments": {"sandbox": h.unique("gvmcp"), "image": h.TEST_IMAGE, "network_isolated": True,
                                     "runtime": "runsc"}}}
    r = subprocess.run(stack._as_user(MEMBER, [server]), input=(json.dumps(call) + "\n").encode(),
                       capture_output=True, timeout=120, cwd=stack.tmp, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    answer = json.loads(r.stdout.decode().splitlines()[0])
    assert answer["result"]["isError"] is True, answer
    assert "'runsc' is not offered" in json.dumps(answer["result"]), answer
    assert docker.containers() == []
