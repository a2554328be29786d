# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 33 item 9: what the member is told when the kernel's OOM killer killed in the
sandbox. The kernel is made to choose the process under test: its oom_score_adj is
raised to 1000 from the host (raising needs no capability; lowering another's needs
CAP_SYS_RESOURCE, which the test machine's root may lack), and the sandbox's memory is
filled with a file on its /dev/shm (charged to its memory cgroup, belonging to no
process), so that the process that then asks for memory (a dd) is small next to the
victim's bonus: the victim goes first, the dd second, nothing else. Docker 20.10 keeps
State.OOMKilled false while the container runs: the service reads its memory cgroup."""

import ctypes
import os
import subprocess

import fault as F
from fault import MEMBER
from privdocker import docker_cli
from test_behind_the_back import EXEC, TICKER, detach, list_execs, prop, read_output

CLONE_NEWNS, MS_REMOUNT, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x20000, 32, 2, 4, 8
MEMORY_MIB = 128                # the least a sandbox may have
FILL_MIB = 100                  # what /dev/shm holds: the sandbox's memory nearly full
NOT_INIT = "lacks the service's init"
RAN_OUT = "the sandbox ran out of memory"


def in_sandbox(f, cid, *argv, check=True):
    """As root in the container (docker exec on the private engine), not through the service."""
    return subprocess.run([docker_cli(), "-H", f.docker.host, "exec", cid] + list(argv),
                          capture_output=True, timeout=60, check=check)


def cgroup_dir(f, cid):
    """The container's memory cgroup directory on the host and its file of event counts
    (v1 hybrid: the memory hierarchy; v2 alone: the unified one)."""
    pid = f.docker.inspect(cid)["State"]["Pid"]
    with open(f"/proc/{pid}/cgroup") as c:
        lines = [line.rstrip("\n").split(":", 2) for line in c]
    if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):     # v2 alone
        path, = [p for _, ctl, p in lines if ctl == ""]
        return "/sys/fs/cgroup" + path, "memory.events"
    path, = [p for _, ctl, p in lines if "memory" in ctl.split(",")]
    return "/sys/fs/cgroup/memory" + path, "memory.oom_control"


def oom_kills(f, cid):
    d, name = cgroup_dir(f, cid)
    with open(os.path.join(d, name)) as c:
        return int(dict(line.split() for line in c)["oom_kill"])


def pid_in_sandbox(f, cid, *words):
    """The host pid of the container's process whose argv holds all of words (its cgroup.procs)."""
    d, _ = cgroup_dir(f, cid)
    with open(os.path.join(d, "cgroup.procs")) as procs:
        for p in procs.read().split():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as c:
                    argv = c.read().split(b"\0")
            except OSError:
                continue
            if all(any(w.encode() in a for a in argv) for w in words):
                return int(p)
    return None


def remount_shm(pid, size):
    """The /dev/shm of pid's mount namespace made size large (mount(2) in a child that
    entered it: the sandbox has no mount(8) that could)."""
    libc = ctypes.CDLL(None, use_errno=True)
    child = os.fork()
    if child == 0:                      # never returns into pytest
        ok = False
        try:
            with open(f"/proc/{pid}/ns/mnt") as ns:
                ok = libc.setns(ns.fileno(), CLONE_NEWNS) == 0 and libc.mount(
                    b"shm", b"/dev/shm", None, MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                    f"size={size}".encode()) == 0
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the sandbox's /dev/shm could not be remounted"


def fill(f, cid, file, mib):
    """mib MiB more in a file on the sandbox's /dev/shm, first made twice as large as its
    memory (Docker's 64 MiB is less): memory of the sandbox's cgroup no process holds."""
    remount_shm(f.docker.inspect(cid)["State"]["Pid"], f"{2 * MEMORY_MIB}m")
    in_sandbox(f, cid, "dd", "if=/dev/zero", f"of=/dev/shm/{file}", "bs=1M", f"count={mib}")


def oom_kill(f, cid, pid):
    """The kernel's OOM killer kills pid (its oom_score_adj 1000, the sandbox's memory
    filled, a dd asking for 32 MiB more: pid first, the dd second)."""
    with open(f"/proc/{pid}/oom_score_adj", "w") as a:
        a.write("1000")
    before = oom_kills(f, cid)
    fill(f, cid, "fill", FILL_MIB)
    hog = in_sandbox(f, cid, "dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1", check=False)
    assert hog.returncode == 137, hog                           # killed, second
    assert not os.path.exists(f"/proc/{pid}"), "the process under test was not the OOM killer's first victim"
    assert oom_kills(f, cid) >= before + 2


def oom_sandbox(f):
    f.write_config(docker_timeout=30)           # Docker's answers late on a loaded machine
    f.activate()
    name = F.unique("oom")
    assert f.create(MEMBER, name, F.h.spec(F.TEST_IMAGE, memory=MEMORY_MIB)).result().ok
    (cid, _), = f.containers_of(name, MEMBER).items()
    return name, cid


def test_oom_killed_supervisor_keeps_its_object_and_says_so(f):
    """A detached process whose supervisor the OOM killer killed: its object stays, ends
    137 (ListExecs, ExitStatus), and its last ReadOutput's stderr ends saying the sandbox
    ran out of memory; then it goes (was: 137 with no word of why)."""
    name, cid = oom_sandbox(f)
    path = detach(f, name, ["sh", "-c", TICKER])
    F.wait_until(lambda: read_output(f, path).ok, 10, what="its output read")
    detach_id = path.rsplit("/", 1)[1]
    pid = F.wait_until(lambda: pid_in_sandbox(f, cid, "--supervise", detach_id), 10, what="its supervisor")
    oom_kill(f, cid, pid)
    F.wait_until(lambda: [path, "sh", False, 137] in list_execs(f, name).result[0], 20, step=0.3,
                 what="the object ended 137")
    assert prop(f, path, EXEC, "ExitStatus") == 137
    err, offset = b"", 0
    while True:
        r = read_output(f, path, offset)
        assert r.ok, dict(r)
        err += bytes(r.result[1])
        offset, more = r.result[2], r.result[3]
        if not more:
            break
    assert err.endswith(b"xagent-sandboxd: killed (exit status 137): " + RAN_OUT.encode() +
                        b" (the kernel's OOM killer killed the process's supervisor)\n"), err[-300:]
    F.wait_until(lambda: path not in [e[0] for e in list_execs(f, name).result[0]], 10, what="the object gone")
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()


def test_oom_killed_channel_says_the_sandbox_ran_out_of_memory(f):
    """The kept channel's program killed by the OOM killer, the sandbox's memory still
    full: the next file call is a BackendError saying the sandbox ran out of memory (was:
    "the sandbox lacks the service's init … or it is another version"); once memory is
    freed the calls work again."""
    name, cid = oom_sandbox(f)
    read = lambda: f.call(MEMBER, "ReadFile", "ssa{sv}", [name, "/etc/hostname", {}])
    assert read().ok                                            # the channel opened
    pid = pid_in_sandbox(f, cid, "--serve")
    assert pid, "the channel's program not found in the sandbox"
    oom_kill(f, cid, pid)
    # what the dd had is free again: /dev/shm filled until the OOM killer stops the
    # writer (2 MiB, the largest there), so that the next program cannot start
    in_sandbox(f, cid, "dd", "if=/dev/zero", "of=/dev/shm/fill2", "bs=2M", check=False)
    r = read()
    assert not r.ok and r["error"] == F.ERR + "BackendError", dict(r)
    assert RAN_OUT in r["message"] and NOT_INIT not in r["message"], dict(r)
    root = f"/proc/{f.docker.inspect(cid)['State']['Pid']}/root"   # from the host: no exec fits in the sandbox
    for file in ("fill", "fill2"):
        os.remove(f"{root}/dev/shm/{file}")
    F.wait_until(lambda: read().ok, 20, step=0.3, what="ReadFile working again")
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()
