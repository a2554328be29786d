# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent-sandboxctl against the real daemon on the private bus, run as the unprivileged
sbx-member (granted by the shipped rules) and sbx-other (not in the group).

Every test creates sandboxes under its own unique names and removes them (and any
snapshot) afterwards, through the CLI itself, whatever the outcome."""

import json
import os
import pwd
import re
import shlex
import subprocess
import time
import uuid

import pytest

import rootbus
import stack as e2e

IMAGE = "xagent-sandbox-test:latest"
MEMBER = e2e.MEMBER
OTHER = e2e.OTHER
NO_SUCH_SANDBOX = "org.xagent.Sandbox1.Error.NoSuchSandbox"
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
INSPECTION_KEYS = {
    "state", "status", "container_id", "image_ref", "image_id", "nano_cpus", "memory_bytes",
    "env", "volumes", "ports", "network_isolated", "networks", "labels", "created_at",
    "working_dir", "fingerprint_label", "version_label", "owner", "user", "hardened", "verdict",
}


@pytest.fixture(scope="module", autouse=True)
def daemon_stopped_afterwards(stack):
    yield
    rootbus.stop_daemon(stack)


@pytest.fixture(scope="module", autouse=True)
def test_image():
    """The suite needs the locally imported test image (tests/setup-docker.sh makes it)."""
    r = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, text=True)
    if r.returncode != 0:
        setup = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             "setup-docker.sh")
        subprocess.run([setup], check=True, capture_output=True, text=True, timeout=600)


@pytest.fixture
def ctl_binary(stack):
    path = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    assert os.access(path, os.X_OK), path
    return path


class Ctl:
    """Runs xagent-sandboxctl as a user, stdin never a terminal; remembers what to clean."""

    def __init__(self, stack, binary):
        self.stack = stack
        self.binary = binary
        self.sandboxes = []
        self.snapshots = []

    def __call__(self, *args, user=MEMBER, input="", timeout=120):
        return self.stack.run_as(user, [self.binary, *args], input=input, timeout=timeout)

    def ok(self, *args, **kw):
        r = self(*args, **kw)
        assert r.returncode == 0, (args, r.returncode, r.stdout, r.stderr)
        return r

    def json(self, *args, **kw):
        return json.loads(self.ok("--json", *args, **kw).stdout)

    def name(self, what="sbx"):
        n = f"ctl-{what}-{uuid.uuid4().hex[:8]}"
        self.sandboxes.append(n)
        return n

    def snapshot_id(self):
        s = f"ctl-snap-{uuid.uuid4().hex[:8]}"
        self.snapshots.append(s)
        return s

    def create(self, name, *opts, image=True):
        args = ["create", name] + (["--image", IMAGE] if image else []) + list(opts)
        return self.json(*args)

    def cleanup(self):
        for n in self.sandboxes:
            self("delete", n)
        for s in self.snapshots:
            self("delete-snapshot", s)
        listed = {row["name"] for row in self.json("list")}
        left = [n for n in self.sandboxes if n in listed]
        assert not left, f"sandboxes left behind: {left}"
        snaps = {row["snapshot_id"] for row in self.json("snapshots")}
        assert not snaps & set(self.snapshots), "snapshots left behind"


@pytest.fixture
def ctl(stack, ctl_binary):
    c = Ctl(stack, ctl_binary)
    try:
        yield c
    finally:
        c.cleanup()


def table(stdout):
    """Header and rows of a table (columns split on runs of spaces), without the legend."""
    lines = stdout.rstrip("\n").split("\n")
    assert lines[-1].endswith("listed."), stdout
    assert lines[-2] == "", stdout
    header = lines[0].split()
    rows = [re.split(r" {1,}", line.rstrip()) for line in lines[1:-2]]
    return header, rows, lines


def key_values(stdout):
    out = {}
    for line in stdout.splitlines():
        key, _, value = line.partition(":")
        out.setdefault(key, []).append(value.strip())
    return out


@pytest.fixture
def member_dir(stack):
    """A directory in sbx-member's home (the default policy's volume root), removed after."""
    home = pwd.getpwnam(MEMBER).pw_dir
    path = os.path.join(home, "ctl-vol-" + uuid.uuid4().hex[:8])
    stack.run_as(MEMBER, ["mkdir", path], check=True)
    try:
        yield path
    finally:
        stack.run_as(MEMBER, ["rm", "-rf", path], check=True)


# ---- the whole life of a sandbox ------------------------------------------------------

def test_create_list_inspect_delete(ctl, member_dir):
    name = ctl.name()
    created = ctl.create(name, "--cpus", "1", "--memory", "256", "--env", "FOO=bar",
                         "--env", "EMPTY=", "--volume", f"{member_dir}:/work",
                         "--port", "0:80", "--workdir", "/work")
    assert created["object"].startswith("/org/xagent/Sandbox1/sandbox/")
    assert re.fullmatch(r"[0-9a-f]{64}", created["fingerprint"])

    # The same spec as JSON, fingerprinted without a daemon, gives the daemon's value.
    spec = {"image": IMAGE, "cpus": 1, "memory": 256, "env": {"FOO": "bar", "EMPTY": ""},
            "volumes": [[member_dir, "/work", "rw"]], "ports": [[0, 80]], "working_dir": "/work"}
    fp = ctl.ok("fingerprint", "--config", "/nonexistent", input=json.dumps(spec))
    assert fp.stdout.strip() == created["fingerprint"]

    header, rows, _ = table(ctl.ok("list").stdout)
    assert header == ["NAME", "STATE", "OWNER", "VERDICT"]
    assert [name, "running", MEMBER, "match"] in rows

    listed = {row["name"]: row for row in ctl.json("list")}
    assert listed[name] == {"name": name, "state": "running", "owner": pwd.getpwnam(MEMBER).pw_uid,
                            "verdict": "match", "object": created["object"]}
    # The global options are accepted after the command as well.
    assert json.loads(ctl.ok("list", "--json").stdout) == json.loads(ctl.ok("--json", "list").stdout)

    ins = ctl.json("inspect", name)
    assert INSPECTION_KEYS <= set(ins), INSPECTION_KEYS - set(ins)
    assert ins["state"] == "running" and ins["verdict"] == "match" and ins["hardened"] is True
    assert ins["memory_bytes"] == 256 * 1024 * 1024 and ins["nano_cpus"] == 10 ** 9
    assert ins["env"]["FOO"] == "bar" and ins["env"]["EMPTY"] == ""
    assert [member_dir, "/work", "rw"] in ins["volumes"]
    assert [p[1] for p in ins["ports"]] == [80]
    assert ins["working_dir"] == "/work" and ins["image_ref"] == IMAGE
    assert ins["fingerprint_label"] == created["fingerprint"]
    assert ins["labels"]["xagent.sandbox.name"] == f"~{pwd.getpwnam(MEMBER).pw_uid}:{name}"
    assert ins["owner"] == pwd.getpwnam(MEMBER).pw_uid

    kv = key_values(ctl.ok("inspect", name).stdout)
    assert set(kv) == set(ins)
    assert kv["state"] == ["running"] and kv["hardened"] == ["yes"]
    assert "FOO=bar" in kv["env"]
    assert f"{member_dir}:/work:rw" in kv["volumes"]
    assert kv["fingerprint_label"] == [created["fingerprint"]]

    ctl.ok("delete", name)
    assert name not in {row["name"] for row in ctl.json("list")}
    ctl.ok("delete", name)          # idempotent, as xagent's delete


def test_people_output_of_create(ctl):
    name = ctl.name()
    r = ctl.ok("create", name, "--image", IMAGE, "--isolated")
    kv = key_values(r.stdout)
    assert kv["object"][0].startswith("/org/xagent/Sandbox1/sandbox/")
    assert re.fullmatch(r"[0-9a-f]{64}", kv["fingerprint"][0])
    ins = ctl.json("inspect", name)
    assert ins["network_isolated"] is True and ins["ports"] == []


def test_spec_file_equals_options(ctl, stack, member_dir):
    # U+2D800 (CJK Ext F): json.dump() writes it as the pair \ud876\udc00, which
    # json-c read as U+FFFD
    opts = ["--image", IMAGE, "--cpus", "1", "--memory", "384", "--env", "A=1",
            "--env", "B=two words \U0002D800", "--volume", f"{member_dir}:/data:ro", "--workdir", "/data"]
    spec = {"image": IMAGE, "cpus": 1, "memory": 384, "env": {"B": "two words \U0002D800", "A": "1"},
            "volumes": [[member_dir, "/data", "ro"]], "working_dir": "/data"}
    path = os.path.join(stack.tmp, "ctl-spec-%s.json" % uuid.uuid4().hex[:8])
    with open(path, "w") as f:
        json.dump(spec, f)
    os.chmod(path, 0o644)
    try:
        by_options, by_file = ctl.name("opt"), ctl.name("file")
        fp_options = ctl.create(by_options, *opts[2:])["fingerprint"]
        fp_file = ctl.json("create", by_file, "--spec", path)["fingerprint"]
        assert fp_options == fp_file

        # Each verifies against the other's form; standard input works as well.
        assert ctl.json("verify", by_options, "--spec", path)["verdict"] == "match"
        assert ctl.json("verify", by_file, *opts)["verdict"] == "match"
        assert ctl.json("verify", by_file, "--spec", "-", input=json.dumps(spec))["verdict"] == "match"

        # The spec comes from one place only.
        r = ctl("create", ctl.name(), "--spec", path, "--cpus", "2")
        assert r.returncode == 2 and "--spec" in r.stderr
    finally:
        os.unlink(path)


def test_verify_exit_status(ctl):
    name = ctl.name()
    ctl.create(name, "--memory", "512")

    r = ctl("verify", name, "--image", IMAGE, "--memory", "512")
    assert r.returncode == 0 and key_values(r.stdout)["verdict"] == ["match"], r.stderr
    assert ctl("verify", name, "--image", IMAGE).returncode == 0      # 512 is the default

    r = ctl("verify", name, "--image", IMAGE, "--memory", "1024")
    assert r.returncode == 1 and r.stderr == ""
    kv = key_values(r.stdout)
    assert kv["verdict"] == ["mismatch"] and "memory" in kv["mismatched_fields"][0].split()

    r = ctl("--json", "verify", name, "--image", IMAGE, "--memory", "1024", "--cpus", "2")
    assert r.returncode == 1
    out = json.loads(r.stdout)
    assert out["verdict"] == "mismatch"
    assert {"memory", "cpus"} <= set(out["mismatched_fields"])

    r = ctl("--json", "verify", name, "--image", IMAGE)
    assert r.returncode == 0 and json.loads(r.stdout) == {"verdict": "match", "mismatched_fields": []}


def test_stop_start(ctl):
    name = ctl.name()
    ctl.create(name)
    ctl.ok("stop", name, "--timeout", "1")
    assert {r["name"]: r for r in ctl.json("list")}[name]["state"] == "stopped"
    assert ctl.json("inspect", name)["state"] == "stopped"
    ctl.ok("stop", name)                        # idempotent
    ctl.ok("start", name)
    assert ctl.json("inspect", name)["state"] == "running"
    ctl.ok("start", name)                       # idempotent
    header, rows, _ = table(ctl.ok("list").stdout)
    assert [name, "running", MEMBER, "match"] in rows


def test_snapshots(ctl):
    name, snap = ctl.name(), ctl.snapshot_id()
    ctl.create(name)
    before = time.time()
    image_id = ctl.json("snapshot", name, snap)["image_id"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", image_id)

    rows = {r["snapshot_id"]: r for r in ctl.json("snapshots")}
    assert rows[snap]["source"] == name and rows[snap]["image_id"] == image_id
    assert rows[snap]["owner"] == pwd.getpwnam(MEMBER).pw_uid
    assert abs(rows[snap]["created_us"] / 1e6 - before) < 120

    header, trows, lines = table(ctl.ok("snapshots").stdout)
    assert header == ["ID", "SOURCE", "OWNER", "CREATED", "IMAGE"]
    row = next(line for line in lines if line.startswith(snap + " "))
    assert row.split()[1:3] == [name, MEMBER] and row.split()[-1] == image_id[7:19]
    assert re.search(r" \d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", row)

    # A sandbox from the snapshot; the snapshot goes once no sandbox uses it.
    child = ctl.name("child")
    ctl.json("create", child, "--snapshot", snap)
    assert ctl.json("inspect", child)["labels"]["xagent.sandbox.snapshot_id"] == snap
    ctl.ok("delete", child)
    ctl.ok("delete-snapshot", snap)
    assert snap not in {r["snapshot_id"] for r in ctl.json("snapshots")}
    r = ctl.ok("snapshot", name, snap)          # people's form, then gone again
    assert key_values(r.stdout)["image_id"][0].startswith("sha256:")
    ctl.ok("delete-snapshot", snap)


def test_list_is_sorted_and_no_legend_drops_header_and_count(ctl):
    """Whatever order the service answers in, the rows come by name (and snapshots by
    id); --no-legend prints the rows only, for scripts."""
    tag = uuid.uuid4().hex[:6]
    names = [f"ctl-{tag}-{w}" for w in ("zulu", "alpha", "mike", "bravo")]
    ctl.sandboxes.extend(names)
    snaps = [f"ctl-snap-{tag}-{w}" for w in ("yankee", "echo", "kilo")]
    ctl.snapshots.extend(snaps)
    for n in names:
        ctl.create(n)
    for s in snaps:
        ctl.json("snapshot", names[0], s)

    mine = [row["name"] for row in ctl.json("list") if row["name"].startswith(f"ctl-{tag}-")]
    assert mine == sorted(names)
    everything = [row["name"] for row in ctl.json("list")]
    assert everything == sorted(everything)
    _, rows, _ = table(ctl.ok("list").stdout)
    assert [r[0] for r in rows] == sorted(r[0] for r in rows)

    # (Docker is shared: other runs' sandboxes of the member may come and go meanwhile.)
    bare = ctl.ok("list", "--no-legend").stdout
    lines = bare.splitlines()
    assert lines and "NAME" not in bare and "listed" not in bare and "" not in lines, bare
    first = [re.split(r" +", line)[0] for line in lines]
    assert first == sorted(first)
    assert [re.split(r" +", line) for line in lines if line.startswith(f"ctl-{tag}-")] == \
        [[n, "running", MEMBER, "match"] for n in sorted(names)]

    ids = [row["snapshot_id"] for row in ctl.json("snapshots")]
    assert ids == sorted(ids) and [i for i in ids if i in snaps] == sorted(snaps)
    bare = ctl.ok("snapshots", "--no-legend").stdout.splitlines()
    first = [line.split()[0] for line in bare]
    assert first == sorted(first) and [i for i in first if i in snaps] == sorted(snaps)
    assert not any("listed" in line or line.startswith("ID ") for line in bare)


# ---- failures ------------------------------------------------------------------------

@pytest.mark.parametrize("verb", ["inspect", "start", "stop", "verify", "snapshot"])
def test_unknown_sandbox(ctl, verb):
    missing = "ctl-missing-" + uuid.uuid4().hex[:8]
    extra = [ctl.snapshot_id()] if verb == "snapshot" else []
    r = ctl(verb, missing, *extra)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith(f"xagent-sandboxctl: {NO_SUCH_SANDBOX}: "), r.stderr
    assert missing in r.stderr


@pytest.mark.parametrize("args", [
    [],
    ["no-such-command"],
    ["--bogus", "list"],
    ["list", "extra"],
    ["inspect"],
    ["inspect", "a", "b"],
    ["create"],
    ["create", "x", "--bogus"],
    ["create", "x", "--cpus", "many"],
    ["create", "x", "--cpus", "0"],
    ["create", "x", "--memory", "-5"],
    ["create", "x", "--env", "NOEQUALS"],
    ["create", "x", "--volume", "/only-host"],
    ["create", "x", "--volume", "/a:/b:ro:extra"],
    ["create", "x", "--port", "80"],
    ["create", "x", "--port", "70000:80"],
    ["create", "x", "--image", IMAGE, "--snapshot", "s"],
    ["create", "x", "--image"],
    ["verify", "x", "--bogus"],
    ["stop", "x", "--timeout", "soon"],
    ["stop", "x", "--timeout", "999999"],
    ["snapshot", "x"],
    ["delete-snapshot"],
    ["fingerprint", "a", "b"],
])
def test_usage_errors(ctl, args):
    r = ctl(*args)
    assert r.returncode == 2, (args, r.stdout, r.stderr)
    assert r.stdout == "" and r.stderr.startswith("xagent-sandboxctl: ")


def json_error(r):
    """The one line of JSON a failure prints on stderr with --json (nothing on stdout)."""
    assert r.stdout == "", r.stdout
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    return json.loads(lines[0])


def test_json_errors_are_json_on_stderr(ctl, stack):
    """With --json (before or after the command) every failure is one line of JSON on
    stderr: {"error": D-Bus name, "message": ...}; a usage error is "usage" with the
    command's usage line; the exit statuses stay 1 and 2."""
    missing = "ctl-missing-" + uuid.uuid4().hex[:8]
    for args in (["--json", "inspect", missing], ["inspect", missing, "--json"]):
        r = ctl(*args)
        assert r.returncode == 1
        e = json_error(r)
        assert e == {"error": NO_SUCH_SANDBOX, "message": f"Sandbox not found: {missing}"}, e
    # Without --json: the plain line, as before.
    r = ctl("inspect", missing)
    assert r.stderr == f"xagent-sandboxctl: {NO_SUCH_SANDBOX}: Sandbox not found: {missing}\n"

    r = ctl("--json", "create", "x", "--spec", "-", input='{"imgae": "x"}')
    assert r.returncode == 1 and json_error(r) == {"error": INVALID_ARGS, "message": "imgae: unknown key"}

    r = ctl("--json", "list", "extra")
    assert r.returncode == 2
    assert json_error(r) == {"error": "usage", "message": "too many arguments",
                             "usage": "xagent-sandboxctl list [--no-legend] [--label K=V]..."}
    for args in (["--json", "no-such-command"], ["--json"], ["--json", "--bogus", "list"],
                 ["--bogus", "--json", "list"], ["--json", "stop", "x", "--timeout", "soon"]):
        r = ctl(*args)
        assert r.returncode == 2, args
        assert json_error(r)["error"] == "usage", args

    r = ctl("--json", "--owner", "no-such-user-here", "inspect", "x")
    assert r.returncode == 1 and json_error(r) == {
        "error": INVALID_ARGS, "message": "--owner: no such user: no-such-user-here"}
    # A local failure: no bus at all.
    r = subprocess.run([ctl.binary, "--json", "list"], capture_output=True, text=True,
                       env={"DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/bus"})
    assert r.returncode == 1 and json_error(r) == {
        "error": "org.freedesktop.DBus.Error.FileNotFound",
        "message": "cannot connect to the system bus: No such file or directory"}
    # A refusal by polkit, as the daemon named it.
    r = ctl("--json", "create", ctl.name(), "--image", IMAGE, user=OTHER)
    assert r.returncode == 1
    assert json_error(r)["error"] == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"


def test_bad_spec_is_invalid_args(ctl, stack):
    names = [ctl.name() for _ in range(4)]
    # Refused by the daemon: below xagent's minimum, a relative guest path, a bad mode.
    for name, opts in zip(names, (["--memory", "64"], ["--volume", "/tmp:relative"],
                                  ["--volume", "/tmp:/g:rx"])):
        r = ctl("create", name, "--image", IMAGE, *opts)
        assert r.returncode == 1 and r.stdout == ""
        assert r.stderr.startswith(f"xagent-sandboxctl: {INVALID_ARGS}: "), r.stderr
    # Refused before the call: a spec file with an unknown key names it the same way.
    r = ctl("create", names[3], "--spec", "-", input='{"imgae": "x"}')
    assert r.returncode == 1 and r.stderr.startswith(f"xagent-sandboxctl: {INVALID_ARGS}: ")
    assert "imgae" in r.stderr
    r = ctl("verify", names[3], "--spec", "-", input="not json")
    assert r.returncode == 1 and INVALID_ARGS in r.stderr
    r = ctl("create", names[3], "--spec", "-", input='{"env": {"A": "\\ud800"}}')
    assert r.returncode == 1 and INVALID_ARGS in r.stderr and "lone high surrogate" in r.stderr
    assert not set(names) & {row["name"] for row in ctl.json("list")}


def test_help(ctl):
    r = ctl.ok("--help")
    for verb in ("list", "snapshots", "create", "inspect", "verify", "start", "stop", "delete",
                 "snapshot", "delete-snapshot", "fingerprint"):
        assert re.search(rf"^  {verb}\b", r.stdout, re.M), verb
        h = ctl.ok(verb, "--help")
        assert h.stdout.startswith(f"xagent-sandboxctl {verb}")
    assert "--volume HOST:GUEST[:MODE]" in ctl.ok("create", "--help").stdout
    assert "--timeout" in ctl.ok("stop", "-h").stdout
    assert ctl.ok("--version").stdout.startswith("xagent-sandboxctl ")


# ---- interactive authorization -------------------------------------------------------

def test_not_on_a_terminal_no_interaction(ctl):
    """Without a terminal the header flag stays off: polkit's challenge for sbx-other
    comes back as InteractiveAuthorizationRequired instead of a prompt."""
    for extra in ([], ["--no-ask-password"]):
        name = ctl.name()
        r = ctl("create", name, "--image", IMAGE, *extra, user=OTHER)
        assert r.returncode == 1
        assert "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired" in r.stderr, r.stderr


def polkitd_log(stack):
    with open(os.path.join(stack.tmp, "polkitd.log"), errors="replace") as f:
        return f.read()


def on_a_terminal(stack, ctl, *args, user=OTHER, timeout=60):
    """Runs the CLI on a pseudo-terminal (script(1)); no input is ever typed."""
    cmd = " ".join(shlex.quote(a) for a in [ctl.binary, *args])
    return stack.run_as(user, ["timeout", str(timeout - 10), "script", "-qec", cmd, "/dev/null"],
                        input="", timeout=timeout)


def test_terminal_runs_the_agent(ctl, stack):
    """On a terminal the flag is on and pkttyagent runs for the call. No logind runs
    here, so polkitd does not route the challenge to that agent and nobody is asked:
    the call ends as AccessDenied (not InteractiveAuthorizationRequired: the flag was
    set), promptly, and the agent is gone afterwards."""
    registered = polkitd_log(stack).count("Registered Authentication Agent")
    name = ctl.name()
    start = time.monotonic()
    r = on_a_terminal(stack, ctl, "create", name, "--image", IMAGE)
    assert time.monotonic() - start < 40
    assert r.returncode == 1, r.stdout
    assert "org.freedesktop.DBus.Error.AccessDenied" in r.stdout, r.stdout
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        log = polkitd_log(stack)
        if log.count("Unregistered Authentication Agent") >= registered + 1:
            break
        time.sleep(0.1)
    assert log.count("Registered Authentication Agent") == registered + 1, log[-2000:]
    assert "pkttyagent --notify-fd" in log
    assert log.count("Unregistered Authentication Agent") == registered + 1

    # --no-ask-password on a terminal: neither the flag nor the agent.
    r = on_a_terminal(stack, ctl, "--no-ask-password", "create", name, "--image", IMAGE)
    assert r.returncode == 1
    assert "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired" in r.stdout, r.stdout
    assert polkitd_log(stack).count("Registered Authentication Agent") == registered + 1


def test_policy_shows_the_callers_own(ctl):
    """`policy` is GetPolicy for people and programs: each user sees its own roots."""
    for user in (MEMBER, OTHER):
        home = pwd.getpwnam(user).pw_dir
        p = ctl.json("policy", user=user)
        assert p["volume_roots"] == [[home, ["ro", "rw"]]], p
        assert p["default_image"] and p["max_cpus"] > 0 and p["python_version"] == "3.11"
        text = ctl.ok("policy", user=user).stdout.splitlines()
        assert f"volume_roots: {home}:ro,rw" in text, text
        assert f"max_sandboxes_per_user: {p['max_sandboxes_per_user']}" in text, text
    r = ctl("--owner", OTHER, "policy")
    assert r.returncode == 2 and "--owner" in r.stderr, r
