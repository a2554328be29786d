# SPDX-License-Identifier: LGPL-2.1-or-later
"""The file API (docs/api.md): ReadFile, WriteFile, ListFiles, RemoveFile on the Manager
and on the sandbox object, done by the service's own program in the sandbox as the
owner, over the kept channel — in the busybox test image and in an image with nothing
in it; the hostile inputs each get an error naming what was wrong; the outsider is
refused; the calls are audited."""

import os
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_copies import bare_image  # noqa: F401 (a fixture)

NOT_RUNNING = h.ERR + "NotRunning"


def read(sandboxd, name, path, options=None, user=MEMBER, obj=False):
    if obj:
        return sandboxd.call(user, "ReadFile", "sa{sv}", [path, options or {}],
                             path=h.object_path(name, MEMBER), iface=h.SANDBOX)
    return sandboxd.call(user, "ReadFile", "ssa{sv}", [name, path, options or {}])


def write(sandboxd, name, path, data, options=None, user=MEMBER, obj=False):
    if obj:
        return sandboxd.call(user, "WriteFile", "saya{sv}", [path, list(data), options or {}],
                             path=h.object_path(name, MEMBER), iface=h.SANDBOX)
    return sandboxd.call(user, "WriteFile", "ssaya{sv}", [name, path, list(data), options or {}])


def listing(sandboxd, name, path, options=None, user=MEMBER, obj=False):
    if obj:
        return sandboxd.call(user, "ListFiles", "sa{sv}", [path, options or {}],
                             path=h.object_path(name, MEMBER), iface=h.SANDBOX)
    return sandboxd.call(user, "ListFiles", "ssa{sv}", [name, path, options or {}])


def remove(sandboxd, name, path, options=None, user=MEMBER, obj=False):
    if obj:
        return sandboxd.call(user, "RemoveFile", "sa{sv}", [path, options or {}],
                             path=h.object_path(name, MEMBER), iface=h.SANDBOX)
    return sandboxd.call(user, "RemoveFile", "ssa{sv}", [name, path, options or {}])


def sh(sandboxd, name, script):
    out = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", script], {}]).result
    assert out[0] == 0, out
    return bytes(out[1])


@pytest.fixture(scope="module")
def box(stack, docker_image):
    bus = h.Sandboxd(stack)
    name = h.unique("files")
    cleanup = h.Cleanup(bus)
    cleanup.sandbox(name)
    bus.create(MEMBER, name, h.spec()).result
    yield name
    cleanup.run()


@pytest.fixture(scope="module")
def bare_box(stack, bare_image):  # noqa: F811
    bus = h.Sandboxd(stack)
    name = h.unique("fbare")
    cleanup = h.Cleanup(bus)
    cleanup.sandbox(name)
    bus.create(MEMBER, name, h.spec(image=bare_image)).result
    yield name
    cleanup.run()


@pytest.fixture(params=["busybox", "bare"])
def any_box(request, box, bare_box):
    return box if request.param == "busybox" else bare_box


@pytest.mark.parametrize("obj", [False, True], ids=["manager", "object"])
def test_every_file_method(sandboxd, any_box, obj):
    name, d = any_box, f"/tmp/f{int(time.time() * 1000)}{int(obj)}"
    before = time.time()
    assert write(sandboxd, name, d + "/sub/a.txt", b"hello\n", obj=obj).error(h.INVALID_ARGS)
    write(sandboxd, name, d + "/sub/a.txt", b"hello\n", {"make_parents": ["b", True], "mode": ["u", 0o600]},
          obj=obj).result
    write(sandboxd, name, d + "/sub/a.txt", b"world\n", {"append": ["b", True]}, obj=obj).result

    data, info = read(sandboxd, name, d + "/sub/a.txt", obj=obj).result
    assert bytes(data) == b"hello\nworld\n"
    assert info["size"] == 12 and info["eof"] is True and info["mode"] & 0o7777 == 0o600, info
    assert info["mode"] & 0o170000 == 0o100000, info
    assert before - 5 <= info["mtime"] / 1e6 <= time.time() + 5, info

    data, info = read(sandboxd, name, d + "/sub/a.txt", {"offset": ["t", 6], "length": ["t", 3]}, obj=obj).result
    assert bytes(data) == b"wor" and info["eof"] is False and info["size"] == 12, info
    # A 4 GiB length is capped by max_file_bytes, not refused.
    data, info = read(sandboxd, name, d + "/sub/a.txt", {"length": ["t", 4 << 30]}, obj=obj).result
    assert bytes(data) == b"hello\nworld\n" and info["eof"] is True

    entries, truncated = listing(sandboxd, name, d, {"depth": ["u", 2]}, obj=obj).result
    got = {e[0]: e for e in entries}
    assert not truncated and set(got) == {"sub", "sub/a.txt"}, entries
    assert got["sub"][1] == "directory" and got["sub/a.txt"][1] == "file", entries
    assert got["sub/a.txt"][2] == 12 and got["sub/a.txt"][4] & 0o7777 == 0o600, entries
    entries, _ = listing(sandboxd, name, d, obj=obj).result
    assert [e[0] for e in entries] == ["sub"], "depth 1 is the default"

    assert "Directory not empty" in remove(sandboxd, name, d + "/sub", obj=obj).error(h.INVALID_ARGS)
    remove(sandboxd, name, d + "/sub/a.txt", obj=obj).result
    msg = read(sandboxd, name, d + "/sub/a.txt", obj=obj).error(h.INVALID_ARGS)
    assert d + "/sub/a.txt" in msg and "No such file or directory" in msg, msg
    write(sandboxd, name, d + "/sub/b", b"", obj=obj).result
    remove(sandboxd, name, d, {"recursive": ["b", True]}, obj=obj).result
    assert "No such file" in listing(sandboxd, name, d, obj=obj).error(h.INVALID_ARGS)


def test_the_owner_writes_and_the_files_are_the_owners(sandboxd, box):
    write(sandboxd, box, "/tmp/owned", b"x").result
    out = sh(sandboxd, box, "stat -c '%u:%g' /tmp/owned").decode().strip()
    assert out == f"{h.uid_of(MEMBER)}:{h.gid_of(MEMBER)}", out
    # As the owner: root's files are not the member's to change.
    assert "Permission denied" in write(sandboxd, box, "/etc/passwd", b"x").error(h.INVALID_ARGS)


@pytest.mark.parametrize("path,what", [
    ("relative/path", "not absolute"),
    ("", "not absolute"),
    ("/" + "a" * 4096, "more than 4096"),
])
def test_bad_paths(sandboxd, box, path, what):
    for call in (read, listing, remove):
        assert what in call(sandboxd, box, path).error(h.INVALID_ARGS)
    assert what in write(sandboxd, box, path, b"x").error(h.INVALID_ARGS)


def test_a_path_with_nul_cannot_be_sent(stack):
    """D-Bus strings carry no NUL: the client library refuses to build such a message
    (python3-dbus: ValueError; libdbus and sd-bus validate every string they receive
    too, so no such path reaches the service)."""
    r = stack.run_as(MEMBER, stack.client_argv("call", h.BUS_NAME, h.MANAGER_PATH, h.MANAGER + ".ReadFile",
                                               "ssa{sv}", '["x", "/tmp/a\\u0000b", {}]'), timeout=60)
    assert r.returncode != 0 and "null" in r.stderr, (r.returncode, r.stderr)


@pytest.mark.parametrize("call,options,what", [
    (read, {"bogus": ["b", True]}, "bogus: unknown option"),
    (read, {"mode": ["u", 1]}, "mode: unknown option"),
    (read, {"offset": ["s", "1"]}, "offset: expected an integer"),
    (read, {"length": ["x", -1]}, "length: -1 is negative"),
    (listing, {"depth": ["u", 0]}, "depth: the value is outside 1–32"),
    (listing, {"limit": ["u", 100001]}, "limit: the value is outside 1–100000"),
    (remove, {"recursive": ["u", 1]}, "recursive: expected a value of type 'b'"),
])
def test_bad_options(sandboxd, box, call, options, what):
    assert what in call(sandboxd, box, "/tmp", options).error(h.INVALID_ARGS)


def test_bad_write_options(sandboxd, box):
    assert "mode: the value is outside 0–4095" in write(sandboxd, box, "/tmp/m", b"", {"mode": ["u", 0o10000]}) \
        .error(h.INVALID_ARGS)
    assert "depth: unknown option" in write(sandboxd, box, "/tmp/m", b"", {"depth": ["u", 1]}).error(h.INVALID_ARGS)


def test_a_directory_is_not_read(sandboxd, box):
    msg = read(sandboxd, box, "/tmp").error(h.INVALID_ARGS)
    assert "'/tmp'" in msg and "Is a directory" in msg, msg


def test_a_fifo_returns_at_most_what_is_there(sandboxd, box):
    """A FIFO with no writer: the read does not hang (ends at once, or within the channel's
    bound) and returns at most the cap."""
    sh(sandboxd, box, "rm -f /tmp/fifo; mkfifo /tmp/fifo")
    start = time.monotonic()
    r = read(sandboxd, box, "/tmp/fifo")
    assert time.monotonic() - start < 90
    if r.ok:
        assert len(r.result[0]) <= 16 << 20
    else:
        r.error(h.INVALID_ARGS, h.ERR + "TimedOut")


def test_a_huge_directory_is_listed_up_to_limit(sandboxd, box):
    sh(sandboxd, box, "mkdir -p /tmp/big && cd /tmp/big && seq 1 100000 | xargs touch")
    entries, truncated = listing(sandboxd, box, "/tmp/big", {"limit": ["u", 50]}).result
    assert len(entries) == 50 and truncated is True
    entries, truncated = listing(sandboxd, box, "/tmp/big").result
    assert len(entries) == 1000 and truncated is True, "the default limit"
    remove(sandboxd, box, "/tmp/big", {"recursive": ["b", True]}).result


def test_a_read_only_volume_is_not_written(sandboxd, cleanup):
    name = h.unique("fro")
    ws = cleanup.workspace(MEMBER, "fro")
    with open(ws + "/in.txt", "w") as f:
        f.write("from the host\n")
    cleanup.sandbox(name)
    sandboxd.create(MEMBER, name, h.spec(volumes=[(ws, "/ro", "ro")])).result
    assert bytes(read(sandboxd, name, "/ro/in.txt").result[0]) == b"from the host\n"
    msg = write(sandboxd, name, "/ro/new.txt", b"x").error(h.INVALID_ARGS)
    assert "/ro/new.txt" in msg and "Read-only file system" in msg, msg
    assert "Read-only file system" in remove(sandboxd, name, "/ro/in.txt").error(h.INVALID_ARGS)


def test_a_stopped_sandbox_is_not_running_and_the_channel_comes_back(sandboxd, cleanup):
    name = h.unique("fstop")
    cleanup.sandbox(name)
    sandboxd.create(MEMBER, name, h.spec()).result
    write(sandboxd, name, "/tmp/kept", b"1").result
    sandboxd.stop(MEMBER, name, timeout=0).result
    for r in (read(sandboxd, name, "/tmp/kept"), write(sandboxd, name, "/tmp/x", b""),
              listing(sandboxd, name, "/tmp"), remove(sandboxd, name, "/tmp/kept")):
        r.error(NOT_RUNNING)
    sandboxd.start(MEMBER, name).result
    assert bytes(read(sandboxd, name, "/tmp/kept").result[0]) == b"1"
    sandboxd.delete(MEMBER, name).result
    assert read(sandboxd, name, "/tmp/kept").error(h.NO_SUCH_SANDBOX)


def daemon_fds(sandboxd):
    return len(os.listdir(f"/proc/{sandboxd.pid()}/fd"))


def test_a_stop_closes_the_channel(sandboxd, cleanup):
    """Each running sandbox used for files holds one kept channel (a Docker stream);
    its stop closes it, so the daemon's descriptors come back to what they were."""
    names = [h.unique(f"fch{i}") for i in range(8)]
    for n in names:
        cleanup.sandbox(n)
        sandboxd.create(MEMBER, n, h.spec()).result
    time.sleep(0.5)
    before = daemon_fds(sandboxd)
    for n in names:
        write(sandboxd, n, "/tmp/x", b"1").result
    used = daemon_fds(sandboxd)
    assert used >= before + len(names), (before, used)
    for n in names:
        sandboxd.stop(MEMBER, n, timeout=0).result
    time.sleep(0.5)
    assert daemon_fds(sandboxd) <= before + 2, (before, used, daemon_fds(sandboxd))
    for n in names:
        sandboxd.delete(MEMBER, n).result


def test_the_outsider_is_refused(sandboxd, box):
    for r in (read(sandboxd, box, "/tmp", user=OTHER, obj=True),
              write(sandboxd, box, "/tmp/o", b"x", user=OTHER, obj=True),
              listing(sandboxd, box, "/tmp", user=OTHER, obj=True),
              remove(sandboxd, box, "/tmp", user=OTHER, obj=True)):
        r.error(*h.DENIED)
    # By name, the outsider's own namespace: refused by polkit before any lookup.
    for r in (read(sandboxd, box, "/tmp", user=OTHER), listing(sandboxd, box, "/tmp", user=OTHER)):
        r.error(*h.DENIED)


def test_file_calls_are_audited(stack, sandboxd, box):
    mark = h.LogMark(stack)
    write(sandboxd, box, "/tmp/audited", b"a").result
    read(sandboxd, box, "/tmp/audited").result
    listing(sandboxd, box, "/tmp").result
    remove(sandboxd, box, "/tmp/audited").result
    read(sandboxd, box, "relative").error(h.INVALID_ARGS)
    read(sandboxd, box, "/tmp", user=OTHER, obj=True).error(*h.DENIED)
    log = mark.new()
    uid = h.uid_of(MEMBER)
    for verb in ("write-file", "read-file", "list-files", "remove-file"):
        assert f'AUDIT uid={uid} verb={verb} sandbox="{box}" outcome=ok owner={uid}' in log, (verb, log)
    assert f'AUDIT uid={uid} verb=read-file sandbox="{box}" outcome={h.INVALID_ARGS}' in log, log
    assert f'AUDIT uid={h.uid_of(OTHER)} verb=read-file sandbox="{box}" outcome=' in log, log


def test_policy_bounds_the_data(stack, sandboxd, cleanup):
    """max_file_bytes caps a read and refuses a larger write; max_disk_mib holds for
    WriteFile as for the copies."""
    name = h.unique("fpol")
    with h.daemon_config(stack, {"max_file_bytes": 1000, "max_disk_mib": 1}):
        policy = sandboxd.call(MEMBER, "GetPolicy").result[0]
        assert policy["max_file_bytes"] == 1000, policy
        cleanup.sandbox(name)
        sandboxd.create(MEMBER, name, h.spec()).result
        sh(sandboxd, name, "head -c 5000 /dev/zero > /tmp/z")
        data, info = read(sandboxd, name, "/tmp/z", {"length": ["t", 4 << 30]}).result
        assert len(data) == 1000 and info["eof"] is False and info["size"] == 5000, info
        data, info = read(sandboxd, name, "/tmp/z", {"offset": ["t", 4500]}).result
        assert len(data) == 500 and info["eof"] is True
        msg = write(sandboxd, name, "/tmp/w", b"x" * 1001).error(h.INVALID_ARGS)
        assert "max_file_bytes" in msg and "1001" in msg, msg
        write(sandboxd, name, "/tmp/w", b"x" * 1000).result
    with h.daemon_config(stack, {"max_disk_mib": 1}):
        # The service's own count of what its calls put in (no walk of the layer):
        # 1,048,000 bytes take the 1 MiB in 4 KiB blocks; processes' writes are not in it.
        write(sandboxd, name, "/tmp/fill", b"f" * 1048000).result
        msg = write(sandboxd, name, "/tmp/more", b"y" * 1000).error(h.POLICY_VIOLATION)
        assert "max_disk_mib" in msg, msg


# ---- runs: on_timeout ------------------------------------------------------------------

def capture(sandboxd, name, argv, options):
    return sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, argv, options])


def test_a_timed_out_run_returns_its_partial_output(sandboxd, box):
    script = "echo before; echo err >&2; sleep 60; echo after"
    start = time.monotonic()
    status, out, err, truncated = capture(sandboxd, box, ["sh", "-c", script],
                                          {"timeout": ["u", 2], "on_timeout": ["s", "result"]}).result
    assert (status, bytes(out), bytes(err), truncated) == (124, b"before\n", b"err\n", False)
    assert 2 <= time.monotonic() - start < 30
    # The default (and "error") is today's TimedOut.
    for options in ({"timeout": ["u", 1]}, {"timeout": ["u", 1], "on_timeout": ["s", "error"]}):
        assert "within 1 s" in capture(sandboxd, box, ["sleep", "30"], options).error(h.ERR + "TimedOut")
    # A run that ends in time is unchanged.
    assert capture(sandboxd, box, ["sh", "-c", "exit 3"], {"on_timeout": ["s", "result"]}).result[0] == 3


def test_on_timeout_is_checked(sandboxd, box):
    msg = capture(sandboxd, box, ["true"], {"on_timeout": ["s", "ignore"]}).error(h.INVALID_ARGS)
    assert "on_timeout" in msg and "ignore" in msg
    assert "on_timeout" in capture(sandboxd, box, ["true"], {"on_timeout": ["b", True]}).error(h.INVALID_ARGS)
    # Streaming has no captured output to return: the option is unknown there.
    r = sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                      [box, ["true"], {"on_timeout": ["s", "result"]}, "</dev/null", ">/dev/null", ">/dev/null"])
    assert "on_timeout: unknown option" in r.error(h.INVALID_ARGS)



# ---- xagent-sandboxctl cat, put, ls, rm -------------------------------------------------

def test_ctl_file_commands(stack, box, cleanup):
    import json
    import os
    binary = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")

    def ctl(*args, input=""):
        return stack.run_as(MEMBER, [binary, "--no-ask-password", *args], input=input, timeout=60)

    ws = cleanup.workspace(MEMBER, "fctl")
    local = os.path.join(ws, "local.txt")
    with open(local, "w") as f:
        f.write("from a file\n")
    r = ctl("put", "--mode", "600", "-p", local, f"{box}:/tmp/ctl/d/a.txt")
    assert r.returncode == 0, r.stderr
    r = ctl("put", "--append", "-", f"{box}:/tmp/ctl/d/a.txt", input="from stdin\n")
    assert r.returncode == 0, r.stderr
    r = ctl("cat", f"{box}:/tmp/ctl/d/a.txt")
    assert (r.returncode, r.stdout) == (0, "from a file\nfrom stdin\n"), r.stderr
    r = ctl("ls", "--depth", "2", f"{box}:/tmp/ctl")
    assert r.returncode == 0, r.stderr
    lines = sorted(r.stdout.splitlines())
    assert lines[0].split() == ["directory", "0755", lines[0].split()[2], "d"], lines
    assert lines[1].split() == ["file", "0600", "23", "d/a.txt"], lines
    r = ctl("--json", "ls", f"{box}:/tmp/ctl/d")
    got = json.loads(r.stdout)
    assert got["truncated"] is False and [e["name"] for e in got["entries"]] == ["a.txt"], got
    r = ctl("rm", f"{box}:/tmp/ctl")
    assert r.returncode == 1 and "InvalidArgs" in r.stderr and "/tmp/ctl" in r.stderr, r.stderr
    assert ctl("rm", "-r", f"{box}:/tmp/ctl").returncode == 0
    r = ctl("cat", f"{box}:/tmp/ctl/d/a.txt")
    assert r.returncode == 1 and "No such file or directory" in r.stderr, r.stderr
    # Usage errors: not NAME:PATH, a relative path, another command's option.
    for args in (("cat", box), ("cat", f"{box}:tmp"), ("rm", "--depth", "2", f"{box}:/tmp"),
                 ("put", "--mode", "9", local, f"{box}:/tmp/x")):
        assert ctl(*args).returncode == 2, args


# ---- runs: a command that cannot be started --------------------------------------------

def test_exec_start_failures_are_invalid_args(sandboxd, box):
    """Docker answers them with exit status 126 and the runtime's text on stdout; the
    service tells them from a process that exits 126 by Docker's Pid (0: nothing ran)."""
    msg = capture(sandboxd, box, ["no-such-command-here"], {}).error(h.INVALID_ARGS)
    assert "argv[0]" in msg and "no-such-command-here" in msg and "no such command in PATH" in msg, msg
    msg = capture(sandboxd, box, ["/no/such/binary"], {}).error(h.INVALID_ARGS)
    assert "argv[0]" in msg and "/no/such/binary" in msg, msg
    msg = capture(sandboxd, box, ["true"], {"working_dir": ["s", "/no/such/dir"]}).error(h.INVALID_ARGS)
    assert "working_dir" in msg and "/no/such/dir" in msg, msg
    # A command that ran and exited 126 or 127 is an ordinary result.
    for code in (126, 127):
        assert capture(sandboxd, box, ["sh", "-c", f"echo OCI runtime exec failed; exit {code}"], {}).result[0] == code


def test_exec_start_failures_in_the_bare_image(sandboxd, bare_box):
    msg = capture(sandboxd, bare_box, ["sh", "-c", "true"], {}).error(h.INVALID_ARGS)
    assert "argv[0]" in msg and "'sh'" in msg, msg
